package userns

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEncodeIsUpstreamsFormat(t *testing.T) {
	got := string(Encode(Mapping{HostID: 131072, Length: 65536}))
	want := `{"uidMappings":[{"hostId":131072,"containerId":0,"length":65536}],"gidMappings":[{"hostId":131072,"containerId":0,"length":65536}]}`
	if got != want {
		t.Errorf("Encode = %s\nwant     %s", got, want)
	}
	back, err := Decode([]byte(got))
	if err != nil || back != (Mapping{HostID: 131072, Length: 65536}) {
		t.Errorf("Decode(Encode) = %+v, %v", back, err)
	}
}

func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		name, content string
		want          Mapping
		wantErr       string
	}{
		{name: "upstream's file", content: `{"uidMappings":[{"hostId":65536,"containerId":0,"length":65536}],"gidMappings":[{"hostId":65536,"containerId":0,"length":65536}]}`,
			want: Mapping{HostID: 65536, Length: 65536}},
		{name: "not JSON", content: `{`, wantErr: "invalid user namespace mappings file: unexpected end of JSON input"},
		{name: "no mapping", content: `{"uidMappings":[],"gidMappings":[]}`, wantErr: "invalid user namespace configuration: no more than one mapping allowed."},
		{name: "two mappings", content: `{"uidMappings":[{"hostId":65536,"length":1},{"hostId":65537,"length":1}]}`,
			wantErr: "invalid user namespace configuration: no more than one mapping allowed."},
		{name: "no gid mapping", content: `{"uidMappings":[{"hostId":65536,"containerId":0,"length":65536}]}`,
			wantErr: "invalid user namespace configuration: GID and UID mappings should be identical."},
		{name: "different gid mapping", content: `{"uidMappings":[{"hostId":65536,"containerId":0,"length":65536}],"gidMappings":[{"hostId":131072,"containerId":0,"length":65536}]}`,
			wantErr: "invalid user namespace configuration: GID and UID mapping should be identical"},
		{name: "root not mapped", content: `{"uidMappings":[{"hostId":65536,"containerId":1,"length":65536}],"gidMappings":[{"hostId":65536,"containerId":1,"length":65536}]}`,
			wantErr: "invalid user namespace configuration: UID 0 must be mapped"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Decode([]byte(tc.content))
			if errText(err) != tc.wantErr {
				t.Errorf("error %q, want %q", errText(err), tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("mapping (-want +got):\n%s", diff)
			}
		})
	}
}
