package cm

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path"
	"path/filepath"
	"sort"

	"github.com/opencontainers/cgroups"
	"github.com/opencontainers/cgroups/fs"
	"github.com/opencontainers/cgroups/fs2"
	"github.com/opencontainers/cgroups/fscommon"
	"github.com/opencontainers/cgroups/systemd"
)

// unifiedKey is the one key of the mounts of a cgroup v2 host.
const unifiedKey = ""

// cgroupfs creates, sets, lists and removes cgroups through
// github.com/opencontainers/cgroups, with the cgroupfs or the systemd
// driver, on cgroup v1 (one mount per subsystem) or v2 (one mount). It holds
// no state besides its configuration and is safe for concurrent use; the
// library serializes what it must.
type cgroupfs struct {
	cfg    *Config
	mounts map[string]string
	// apply creates a cgroup that does not exist: the library's
	// Apply(-1). Tests of a cgroup v2 tree replace it, since the library
	// creates v2 cgroups only under /sys/fs/cgroup (it enables the
	// controllers of every parent on the way down); everything else they
	// run is the library's.
	apply func(m cgroups.Manager, paths map[string]string) error
}

func libApply(m cgroups.Manager, _ map[string]string) error { return m.Apply(-1) }

// hostMounts returns the host's cgroup mounts as upstream's
// GetCgroupSubsystems: the unified mount point on cgroup v2, the shortest
// mount point of every subsystem on v1, and on a hybrid host also the
// unified mount (key "", as the library's own path set has it: runc puts
// containers there too, so pod cgroups are made and removed there).
func hostMounts() (map[string]string, error) {
	if cgroups.IsCgroup2UnifiedMode() {
		return map[string]string{unifiedKey: fs2.UnifiedMountpoint}, nil
	}
	all, err := cgroups.GetCgroupMounts(true)
	if err != nil {
		return nil, fmt.Errorf("list cgroup mounts: %w", err)
	}
	out := map[string]string{}
	for _, m := range all {
		for _, sub := range m.Subsystems {
			if prev, ok := out[sub]; !ok || len(m.Mountpoint) < len(prev) {
				out[sub] = m.Mountpoint
			}
		}
	}
	if len(out) == 0 {
		return nil, errors.New("list cgroup mounts: none found")
	}
	if cgroups.IsCgroup2HybridMode() {
		out[unifiedKey] = hybridMountpoint
	}
	return out, nil
}

// hybridMountpoint is where a hybrid host mounts its cgroup v2 hierarchy.
const hybridMountpoint = "/sys/fs/cgroup/unified"

// unified reports a cgroup v2 host: the unified mount is the only one (a
// hybrid v1 host has it beside the v1 subsystems).
func (c *cgroupfs) unified() bool {
	_, ok := c.mounts[unifiedKey]
	return ok && len(c.mounts) == 1
}

// paths maps every mount key to n's directory under it.
func (c *cgroupfs) paths(n Name) (map[string]string, error) {
	dir, err := c.cfg.driverName(n)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(c.mounts))
	for key, mount := range c.mounts {
		out[key] = filepath.Join(mount, dir)
	}
	return out, nil
}

// manager returns the library's manager of n with r.
func (c *cgroupfs) manager(n Name, r *cgroups.Resources) (cgroups.Manager, error) {
	paths, err := c.paths(n)
	if err != nil {
		return nil, err
	}
	cg := &cgroups.Cgroup{Resources: r}
	if c.cfg.Driver == DriverSystemd {
		slice, err := n.Systemd()
		if err != nil {
			return nil, err
		}
		// As upstream's libctCgroupConfig: the parent slice and the name.
		dir, base := path.Split(slice)
		cg.Systemd, cg.Parent, cg.Name = true, path.Base(dir), base
		if dir == "/" {
			cg.Parent = "-.slice"
		}
		if c.unified() {
			return systemd.NewUnifiedManager(cg, paths[unifiedKey])
		}
		return systemd.NewLegacyManager(cg, paths)
	}
	cg.Path = n.Cgroupfs()
	if c.unified() {
		return fs2.NewManager(cg, paths[unifiedKey])
	}
	return fs.NewManager(cg, paths)
}

// libResources converts r for the library, as upstream's toResources:
// devices and the freezer untouched, cpu shares as cpu.weight on v2, the
// unified files only on v2.
func (c *cgroupfs) libResources(r Resources) *cgroups.Resources {
	out := &cgroups.Resources{SkipDevices: true, SkipFreezeOnSet: true}
	if r.Memory != nil {
		out.Memory = *r.Memory
	}
	if r.CPUShares != nil {
		if c.unified() {
			out.CpuWeight = CPUWeight(*r.CPUShares)
		} else {
			out.CpuShares = *r.CPUShares
		}
	}
	if r.CPUQuota != nil {
		out.CpuQuota = *r.CPUQuota
	}
	if r.CPUPeriod != nil {
		out.CpuPeriod = *r.CPUPeriod
	}
	if r.PidsLimit != nil {
		v := *r.PidsLimit
		out.PidsLimit = &v
	}
	if len(r.Unified) > 0 && c.unified() {
		out.Unified = maps.Clone(r.Unified)
	}
	return out
}

// countsForExistence reports whether a mount's directory makes a cgroup
// exist, as upstream's allowlist: controllers the library may not create
// (named hierarchies, misc) and a hybrid host's unified mount do not
// count.
func (c *cgroupfs) countsForExistence(key string) bool {
	switch key {
	case unifiedKey:
		return c.unified()
	case "cpu", "cpuacct", "cpuset", "memory", "pids", "hugetlb":
		return true
	}
	return false
}

// exists reports whether n's directory exists under every mount that
// counts (countsForExistence).
func (c *cgroupfs) exists(n Name) (bool, error) {
	paths, err := c.paths(n)
	if err != nil {
		return false, err
	}
	for key, p := range paths {
		if !c.countsForExistence(key) {
			continue
		}
		st, err := os.Stat(p)
		if errors.Is(err, os.ErrNotExist) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("stat cgroup %q: %w", p, err)
		}
		if !st.IsDir() {
			return false, fmt.Errorf("stat cgroup %q: not a directory", p)
		}
	}
	return true, nil
}

// create makes n (unless it exists) and sets r on it, as upstream's
// Create (Apply, then Set).
func (c *cgroupfs) create(n Name, r Resources) error {
	lr := c.libResources(r)
	m, err := c.manager(n, lr)
	if err != nil {
		return fmt.Errorf("create cgroup %q: %w", n.Cgroupfs(), err)
	}
	ok, err := c.exists(n)
	if err != nil {
		return err
	}
	if !ok {
		paths, err := c.paths(n)
		if err != nil {
			return err
		}
		if err := c.apply(m, paths); err != nil {
			return fmt.Errorf("create cgroup %q: %w", n.Cgroupfs(), err)
		}
	}
	if err := m.Set(lr); err != nil {
		return fmt.Errorf("set cgroup %q: %w", n.Cgroupfs(), err)
	}
	return nil
}

// update sets r on n, which must exist.
func (c *cgroupfs) update(n Name, r Resources) error {
	lr := c.libResources(r)
	m, err := c.manager(n, lr)
	if err != nil {
		return fmt.Errorf("update cgroup %q: %w", n.Cgroupfs(), err)
	}
	if err := m.Set(lr); err != nil {
		return fmt.Errorf("update cgroup %q: %w", n.Cgroupfs(), err)
	}
	return nil
}

// destroy removes n under every mount; a cgroup that still holds
// processes is not removed (the kernel refuses) and the error says so.
func (c *cgroupfs) destroy(n Name) error {
	m, err := c.manager(n, &cgroups.Resources{})
	if err != nil {
		return fmt.Errorf("remove cgroup %q: %w", n.Cgroupfs(), err)
	}
	// A cgroup with processes cannot be removed: the library's rmdir
	// would retry for seconds per controller, holding up housekeeping
	// (and berth's stop). Leave it to a later pass.
	if pids, err := m.GetAllPids(); err == nil && len(pids) > 0 {
		return fmt.Errorf("remove cgroup %q: %d processes still in it", n.Cgroupfs(), len(pids))
	}
	if err := m.Destroy(); err != nil {
		return fmt.Errorf("remove cgroup %q: %w", n.Cgroupfs(), err)
	}
	return nil
}

// children lists the names of n's child cgroups (directories) under any
// of its mounts, sorted: on v1 a pod cgroup left in some controllers only
// (berth killed in the middle of destroy, which removes them one at a
// time) is still found, as upstream's GetAllPodsFromCgroups reads every
// subsystem.
func (c *cgroupfs) children(n Name) ([]string, error) {
	paths, err := c.paths(n)
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, errors.New("list cgroups: no cgroup mount")
	}
	seen := map[string]bool{}
	for _, dir := range paths {
		entries, err := os.ReadDir(dir)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list cgroups in %q: %w", dir, err)
		}
		for _, e := range entries {
			if e.IsDir() {
				seen[e.Name()] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for name := range seen {
		out = append(out, name)
	}
	sort.Strings(out)
	return out, nil
}

// memoryUsage reads n's memory usage in bytes: memory.usage_in_bytes on
// cgroup v1, memory.current on v2 (as the library's stats read them).
func (c *cgroupfs) memoryUsage(n Name) (int64, error) {
	paths, err := c.paths(n)
	if err != nil {
		return 0, err
	}
	dir, file := paths["memory"], "memory.usage_in_bytes"
	if c.unified() {
		dir, file = paths[unifiedKey], "memory.current"
	}
	v, err := fscommon.GetCgroupParamUint(dir, file)
	if err != nil {
		return 0, fmt.Errorf("read memory usage of cgroup %q: %w", n.Cgroupfs(), err)
	}
	return int64(min(v, uint64(math.MaxInt64))), nil
}
