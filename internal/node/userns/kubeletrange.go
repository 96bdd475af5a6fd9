package userns

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/user"

	"k8s.io/klog/v2"
)

// Host is what KubeletRange reads from the host. OSHost returns the real
// one; tests inject their own.
type Host struct {
	LookupUser func(name string) (*user.User, error)
	// LookPath finds the getsubids binary (exec.LookPath).
	LookPath func(file string) (string, error)
	// Output runs a command and returns its standard output.
	Output func(ctx context.Context, name string, args ...string) ([]byte, error)
	// Open opens /etc/subuid or /etc/subgid.
	Open func(name string) (io.ReadCloser, error)
}

// OSHost returns a Host backed by the operating system.
func OSHost() Host {
	return Host{
		LookupUser: user.Lookup,
		LookPath:   exec.LookPath,
		Output: func(ctx context.Context, name string, args ...string) ([]byte, error) {
			return exec.CommandContext(ctx, name, args...).Output()
		},
		Open: func(name string) (io.ReadCloser, error) { return os.Open(name) },
	}
}

// Subordinate ID files, read when getsubids is not installed.
const (
	subUIDFile = "/etc/subuid"
	subGIDFile = "/etc/subgid"
)

// KubeletRange returns the host IDs pods' user namespaces come from, as
// upstream's getKubeletMappings: without a "kubelet" user, the default
// range; with one, its subordinate IDs from getsubids, which must give
// the same single range for users and groups. Where upstream takes the
// default range because getsubids is not installed, berth reads
// /etc/subuid and /etc/subgid itself (what getsubids reads on a host
// without a remote subid service), so a range set aside for the kubelet
// user is honoured either way; with no entry for the user there, the
// default range.
func KubeletRange(ctx context.Context, h Host, idsPerPod uint32) (Range, error) {
	logger := klog.FromContext(ctx)
	u, err := h.LookupUser(KubeletUser)
	if err != nil {
		if errors.As(err, new(user.UnknownUserError)) {
			logger.V(5).Info("User namespaces: user not found, using default mappings", "user", KubeletUser)
			return DefaultRange(idsPerPod), nil
		}
		return Range{}, fmt.Errorf("look up user %q: %w", KubeletUser, err)
	}
	cmd, err := h.LookPath("getsubids")
	if err != nil {
		if !errors.Is(err, exec.ErrNotFound) && !errors.Is(err, fs.ErrNotExist) {
			return Range{}, fmt.Errorf("look up getsubids: %w", err)
		}
		return subIDFilesRange(h, u, idsPerPod)
	}
	uids, err := h.Output(ctx, cmd, KubeletUser)
	if err != nil {
		return Range{}, fmt.Errorf("error retrieving additional uids for user %q: %w", KubeletUser, err)
	}
	gids, err := h.Output(ctx, cmd, "-g", KubeletUser)
	if err != nil {
		return Range{}, fmt.Errorf("error retrieving additional gids for user %q: %w", KubeletUser, err)
	}
	if string(uids) != string(gids) {
		return Range{}, fmt.Errorf("mismatched subuids and subgids for user %q", KubeletUser)
	}
	logger.V(5).Info("User namespaces: user found, using mappings from getsubids", "user", KubeletUser)
	return ParseGetSubIDs(string(uids))
}

// subIDFilesRange reads the kubelet user's range from /etc/subuid and
// /etc/subgid: one entry, the same in both, or none (the default range).
func subIDFilesRange(h Host, u *user.User, idsPerPod uint32) (Range, error) {
	uids, err := readSubIDFile(h, subUIDFile, u)
	if err != nil {
		return Range{}, err
	}
	gids, err := readSubIDFile(h, subGIDFile, u)
	if err != nil {
		return Range{}, err
	}
	switch {
	case len(uids) == 0 && len(gids) == 0:
		return DefaultRange(idsPerPod), nil
	case len(uids) != 1 || len(gids) != 1 || uids[0] != gids[0]:
		return Range{}, fmt.Errorf("mismatched subuids and subgids for user %q: want one range, the same in %s and %s", KubeletUser, subUIDFile, subGIDFile)
	}
	return uids[0], nil
}

func readSubIDFile(h Host, name string, u *user.User) ([]Range, error) {
	f, err := h.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open %q: %w", name, err)
	}
	defer f.Close()
	rs, err := ParseSubIDFile(f, u.Username, u.Uid)
	if err != nil {
		return nil, fmt.Errorf("read %q: %w", name, err)
	}
	return rs, nil
}
