package cm

import (
	"fmt"
	"path"
	"strings"

	"github.com/opencontainers/cgroups/systemd"
	"k8s.io/apimachinery/pkg/types"
)

// Name is a cgroup's name as a list of components, from the top of the
// hierarchy down, independent of the driver: {"kubepods", "burstable",
// "pod<uid>"} is /kubepods/burstable/pod<uid> with cgroupfs and
// /kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid>.slice
// with systemd. The empty Name is the root.
type Name []string

const (
	// kubepodsName is the node allocatable cgroup under cgroupRoot.
	kubepodsName = "kubepods"
	// podPrefix starts every pod cgroup's last component.
	podPrefix     = "pod"
	systemdSuffix = ".slice"
)

// Child returns n with more components.
func (n Name) Child(components ...string) Name {
	return append(append(Name{}, n...), components...)
}

// Cgroupfs returns n as a cgroupfs path: "/" joined with its components.
func (n Name) Cgroupfs() string {
	return "/" + path.Join(n...)
}

// Systemd returns n as a systemd slice path, as upstream's ToSystemd: each
// component's dashes become underscores, the components are joined with
// dashes into one slice name, and systemd's expansion gives every parent
// slice. It fails on a component systemd cannot take.
func (n Name) Systemd() (string, error) {
	if len(n) == 0 || (len(n) == 1 && n[0] == "") {
		return "/", nil
	}
	parts := make([]string, len(n))
	for i, c := range n {
		parts[i] = strings.ReplaceAll(c, "-", "_")
	}
	out, err := systemd.ExpandSlice(strings.Join(parts, "-") + systemdSuffix)
	if err != nil {
		return "", fmt.Errorf("convert cgroup name %q to a systemd slice: %w", n.Cgroupfs(), err)
	}
	return out, nil
}

// ParseCgroupfs turns a cgroupfs path ("/", "/a/b") into a Name, as
// upstream's ParseCgroupfsToCgroupName.
func ParseCgroupfs(p string) Name {
	trimmed := strings.TrimPrefix(p, "/")
	if trimmed == "" {
		return Name{}
	}
	return Name(strings.Split(trimmed, "/"))
}

// ParseSystemd turns a systemd slice path into a Name, as upstream's
// ParseSystemdToCgroupName: the last slice's dash-separated parts, with
// underscores turned back into dashes.
func ParseSystemd(p string) Name {
	base := strings.TrimSuffix(path.Base(p), systemdSuffix)
	if base == "" || base == "/" || base == "-" {
		return Name{}
	}
	parts := strings.Split(base, "-")
	out := make(Name, len(parts))
	for i, part := range parts {
		out[i] = strings.ReplaceAll(part, "_", "-")
	}
	return out
}

// podComponent is the last component of a pod's cgroup name.
func podComponent(uid types.UID) string {
	return podPrefix + string(uid)
}

// podUIDFromComponent returns the UID in a pod cgroup's last component,
// as listed on the machine (systemd's underscores included).
func podUIDFromComponent(c string, systemdDriver bool) (types.UID, bool) {
	if systemdDriver {
		if !strings.HasSuffix(c, systemdSuffix) {
			return "", false
		}
		// kubepods-burstable-pod<uid_with_underscores>.slice
		c = strings.TrimSuffix(c, systemdSuffix)
		i := strings.LastIndexByte(c, '-')
		c = strings.ReplaceAll(c[i+1:], "_", "-")
	}
	uid, ok := strings.CutPrefix(c, podPrefix)
	if !ok || uid == "" {
		return "", false
	}
	return types.UID(uid), true
}
