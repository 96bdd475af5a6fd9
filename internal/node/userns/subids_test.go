package userns

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os/exec"
	"os/user"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseGetSubIDs(t *testing.T) {
	for _, tc := range []struct {
		out     string
		want    Range
		wantErr string
	}{
		{out: "0: kubelet 65536 2147483648\n", want: Range{First: 65536, Length: 2147483648}},
		{out: "0: kubelet 65536 65536\n1: kubelet 131072 65536\n", wantErr: "error parsing line \"0: kubelet 65536 65536\\n1: kubelet 131072 65536\\n\": it must contain only one line"},
		{out: "0: kubelet 65536\n", wantErr: "invalid line \"0: kubelet 65536\\n\""},
		{out: "0: kubelet x 65536", wantErr: "error parsing line \"0: kubelet x 65536\": strconv.ParseUint: parsing \"x\": invalid syntax"},
		{out: "0: kubelet 65536 4294967296", wantErr: "error parsing line \"0: kubelet 65536 4294967296\": strconv.ParseUint: parsing \"4294967296\": value out of range"},
	} {
		got, err := ParseGetSubIDs(tc.out)
		if errText(err) != tc.wantErr || got != tc.want {
			t.Errorf("ParseGetSubIDs(%q) = %+v, %q; want %+v, %q", tc.out, got, errText(err), tc.want, tc.wantErr)
		}
	}
}

func TestParseSubIDFile(t *testing.T) {
	const file = "# comment\nalice:100000:65536\n\nkubelet:65536:131072\n999:262144:65536\nbob:bad\n"
	for _, tc := range []struct {
		name, user, id, file string
		want                 []Range
		wantErr              string
	}{
		{name: "by name", user: "kubelet", id: "1000", file: file, want: []Range{{65536, 131072}}},
		{name: "by name and UID", user: "kubelet", id: "999", file: file, want: []Range{{65536, 131072}, {262144, 65536}}},
		{name: "none", user: "carol", id: "1001", file: file},
		{name: "malformed line of the user", user: "bob", id: "1002", file: file, wantErr: `parse subordinate IDs line 6 "bob:bad": want <user>:<first>:<count>`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseSubIDFile(strings.NewReader(tc.file), tc.user, tc.id)
			if errText(err) != tc.wantErr {
				t.Errorf("error %q, want %q", errText(err), tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ranges (-want +got):\n%s", diff)
			}
		})
	}
}

// fakeHost is a Host with a kubelet user (unless noUser), getsubids
// answering uids and gids (unless noGetsubids), and files.
type fakeHost struct {
	noUser, noGetsubids bool
	uids, gids          string
	files               map[string]string
	ran                 []string
}

func (f *fakeHost) host() Host {
	return Host{
		LookupUser: func(name string) (*user.User, error) {
			if f.noUser {
				return nil, user.UnknownUserError(name)
			}
			return &user.User{Username: name, Uid: "999"}, nil
		},
		LookPath: func(file string) (string, error) {
			if f.noGetsubids {
				return "", &exec.Error{Name: file, Err: exec.ErrNotFound}
			}
			return "/usr/bin/" + file, nil
		},
		Output: func(_ context.Context, name string, args ...string) ([]byte, error) {
			f.ran = append(f.ran, name+" "+strings.Join(args, " "))
			if args[0] == "-g" {
				return []byte(f.gids), nil
			}
			return []byte(f.uids), nil
		},
		Open: func(name string) (io.ReadCloser, error) {
			s, ok := f.files[name]
			if !ok {
				return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
			}
			return io.NopCloser(strings.NewReader(s)), nil
		},
	}
}

func TestKubeletRange(t *testing.T) {
	const sub = "0: kubelet 196608 6553600\n"
	for _, tc := range []struct {
		name    string
		host    fakeHost
		want    Range
		wantErr string
		wantRan []string
	}{
		{name: "no kubelet user: the default range", host: fakeHost{noUser: true}, want: Range{65536, 4294901760}},
		{name: "getsubids", host: fakeHost{uids: sub, gids: sub}, want: Range{196608, 6553600},
			wantRan: []string{"/usr/bin/getsubids kubelet", "/usr/bin/getsubids -g kubelet"}},
		{name: "getsubids disagree", host: fakeHost{uids: sub, gids: "0: kubelet 65536 65536\n"},
			wantErr: `mismatched subuids and subgids for user "kubelet"`,
			wantRan: []string{"/usr/bin/getsubids kubelet", "/usr/bin/getsubids -g kubelet"}},
		{name: "files without getsubids", host: fakeHost{noGetsubids: true, files: map[string]string{
			"/etc/subuid": "kubelet:196608:6553600\n", "/etc/subgid": "999:196608:6553600\n"}}, want: Range{196608, 6553600}},
		{name: "no files: the default range", host: fakeHost{noGetsubids: true}, want: Range{65536, 4294901760}},
		{name: "no entry: the default range", host: fakeHost{noGetsubids: true, files: map[string]string{
			"/etc/subuid": "alice:100000:65536\n", "/etc/subgid": "alice:100000:65536\n"}}, want: Range{65536, 4294901760}},
		{name: "files disagree", host: fakeHost{noGetsubids: true, files: map[string]string{
			"/etc/subuid": "kubelet:196608:6553600\n", "/etc/subgid": "kubelet:262144:6553600\n"}},
			wantErr: `mismatched subuids and subgids for user "kubelet": want one range, the same in /etc/subuid and /etc/subgid`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := KubeletRange(context.Background(), tc.host.host(), 65536)
			if errText(err) != tc.wantErr {
				t.Errorf("error %q, want %q", errText(err), tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("range %+v, want %+v", got, tc.want)
			}
			if diff := cmp.Diff(tc.wantRan, tc.host.ran); diff != "" {
				t.Errorf("commands (-want +got):\n%s", diff)
			}
		})
	}
}

func TestKubeletRangeLookupFailure(t *testing.T) {
	h := (&fakeHost{}).host()
	h.LookupUser = func(string) (*user.User, error) { return nil, errors.New("nss down") }
	if _, err := KubeletRange(context.Background(), h, 65536); errText(err) != `look up user "kubelet": nss down` {
		t.Errorf("error %v", err)
	}
}
