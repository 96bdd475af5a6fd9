package cm

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/opencontainers/cgroups"
)

// ProcessOptions say where a process of the node's own (berth) belongs.
type ProcessOptions struct {
	// Cgroup is kubeletCgroups: a cgroupfs name ("/kubelet.slice"), made
	// when missing; "" leaves the process where it is.
	Cgroup string
	// Mounts as in Config; nil reads the host's.
	Mounts map[string]string
	// ProcDir is /proc (tests give another).
	ProcDir string
}

// EnsureProcess puts pid where upstream's ensureProcessInContainerWithOOMScore
// does for kubeletCgroups: into opts.Cgroup (with the cgroupfs form
// whatever the driver, as upstream's system containers), made when
// missing, unless it is there already. A process outside the host's PID
// namespace (berth in a container) is left alone; when that cannot be told
// (init's namespace unreadable) it fails, as upstream.
func EnsureProcess(pid int, opts ProcessOptions) error {
	if opts.ProcDir == "" {
		opts.ProcDir = "/proc"
	}
	if opts.Cgroup == "" {
		return nil
	}
	if inHost, err := inHostPIDNamespace(opts.ProcDir, pid); err != nil || !inHost {
		return err
	}
	return moveProcess(pid, opts)
}

// moveProcess moves pid into opts.Cgroup through the library's Apply.
func moveProcess(pid int, opts ProcessOptions) error {
	fs, m, err := systemManager(opts.Mounts, opts.Cgroup)
	if err != nil {
		return fmt.Errorf("move process %d to cgroup %q: %w", pid, opts.Cgroup, err)
	}
	current, err := cgroups.ParseCgroupFile(filepath.Join(opts.ProcDir, strconv.Itoa(pid), "cgroup"))
	if err != nil {
		return fmt.Errorf("read cgroups of process %d: %w", pid, err)
	}
	key := "cpu"
	if fs.unified() {
		key = unifiedKey
	}
	if current[key] == ParseCgroupfs(opts.Cgroup).Cgroupfs() {
		return nil
	}
	if err := m.Apply(pid); err != nil {
		return fmt.Errorf("move process %d to cgroup %q: %w", pid, opts.Cgroup, err)
	}
	return nil
}

// systemManager returns the library's manager of a system cgroup (a
// cgroupfs name, whatever the driver, as upstream's createManager: no
// limits, devices untouched), and the cgroupfs it lives on; nil mounts
// read the host's. Applying a pid creates the cgroup when missing.
func systemManager(mounts map[string]string, cgroup string) (*cgroupfs, cgroups.Manager, error) {
	if mounts == nil {
		var err error
		if mounts, err = hostMounts(); err != nil {
			return nil, nil, err
		}
	}
	fs := &cgroupfs{cfg: &Config{Driver: DriverCgroupfs}, mounts: mounts, apply: libApply}
	m, err := fs.manager(ParseCgroupfs(cgroup), &cgroups.Resources{SkipDevices: true})
	if err != nil {
		return nil, nil, err
	}
	return fs, m, nil
}

// inHostPIDNamespace reports whether pid shares init's PID namespace, as
// upstream's isProcessRunningInHost.
func inHostPIDNamespace(procDir string, pid int) (bool, error) {
	initNS, err := os.Readlink(filepath.Join(procDir, "1", "ns", "pid"))
	if err != nil {
		return false, fmt.Errorf("read init's pid namespace: %w", err)
	}
	ns, err := os.Readlink(filepath.Join(procDir, strconv.Itoa(pid), "ns", "pid"))
	if err != nil {
		return false, fmt.Errorf("read pid namespace of process %d: %w", pid, err)
	}
	return ns == initNS, nil
}
