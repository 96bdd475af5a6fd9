package cm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/opencontainers/cgroups"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// SystemOptions say where the node's system processes belong.
type SystemOptions struct {
	// Cgroup is systemCgroups: a cgroupfs name ("/system"), whatever the
	// driver, as upstream's system containers; not "/".
	Cgroup string
	// Mounts as in Config; nil reads the host's.
	Mounts map[string]string
	// ProcDir is /proc (tests give another).
	ProcDir string
	// Clock paces Run (required).
	Clock clock.WithTicker
}

// systemPeriod is how often upstream's container manager ensures the state
// of its system containers.
const systemPeriod = time.Minute

// ensureAttempts is how many times one Ensure lists the root cgroup and
// moves what it finds, as upstream's ensureSystemCgroups (processes fork
// while they are moved).
const ensureAttempts = 11

// SystemCgroup keeps the processes of the root cgroup in systemCgroups, as
// upstream's ensureSystemCgroups: every process of the root cgroup itself
// (not of its children) but init and the kernel threads, which stay so
// that their work is not tied to the system cgroup's limits. The cgroup is
// made when the first process moves into it.
//
// It holds only its options; Ensure and Run may be called from any
// goroutine, and the agent runs Run alone.
type SystemCgroup struct {
	opts SystemOptions
}

// NewSystemCgroup checks opts (the cgroup is not the root, as upstream's
// setupNode) and touches nothing.
func NewSystemCgroup(opts SystemOptions) (*SystemCgroup, error) {
	if len(ParseCgroupfs(opts.Cgroup)) == 0 {
		return nil, fmt.Errorf("configure system cgroup %q: system container cannot be root (\"/\")", opts.Cgroup)
	}
	if opts.ProcDir == "" {
		opts.ProcDir = "/proc"
	}
	if opts.Clock == nil {
		return nil, errors.New("new system cgroup: Clock is required")
	}
	return &SystemCgroup{opts: opts}, nil
}

// Run ensures the system cgroup now and every minute until ctx ends,
// logging the failures, as upstream's container manager.
func (s *SystemCgroup) Run(ctx context.Context) error {
	s.ensure(ctx)
	// The ticker starts after the first pass, so a fake clock's waiter
	// tells a test that pass is over.
	t := s.opts.Clock.NewTicker(systemPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
			s.ensure(ctx)
		}
	}
}

func (s *SystemCgroup) ensure(ctx context.Context) {
	if err := s.Ensure(); err != nil {
		klog.FromContext(ctx).Info("Failed to ensure state", "containerName", s.opts.Cgroup, "err", err)
	}
}

// Ensure moves the movable processes of the root cgroup into the system
// cgroup: up to ensureAttempts rounds, until a listing finds none; the
// error is the last round's.
func (s *SystemCgroup) Ensure() error {
	fs, m, err := systemManager(s.opts.Mounts, s.opts.Cgroup)
	if err != nil {
		return fmt.Errorf("ensure system cgroup %q: %w", s.opts.Cgroup, err)
	}
	var last error
	for range ensureAttempts {
		procs, err := s.rootProcesses(fs)
		if err != nil {
			last = err
			continue
		}
		pids := systemMovable(procs)
		if len(pids) == 0 {
			return nil
		}
		for _, pid := range pids {
			if err := m.Apply(pid); err != nil {
				last = fmt.Errorf("move process %d to system cgroup %q: %w", pid, s.opts.Cgroup, err)
			}
		}
	}
	return last
}

// rootProcess is a process of the root cgroup.
type rootProcess struct {
	PID int
	// Kernel: a kernel thread, which has no executable.
	Kernel bool
}

// systemMovable chooses the processes of the root cgroup that move to the
// system cgroup, as upstream's ensureSystemCgroups: all but init (pid 1)
// and the kernel threads.
func systemMovable(procs []rootProcess) []int {
	var out []int
	for _, p := range procs {
		if p.PID == 1 || p.Kernel {
			continue
		}
		out = append(out, p.PID)
	}
	return out
}

// rootProcesses lists the processes of the root cgroup itself: its
// cgroup.procs on the v2 mount, or on v1 in the devices hierarchy, as
// upstream's GetPids; each is a kernel thread when its exe link does not
// exist (upstream's isKernelPid: a process gone meanwhile counts as one).
// On v1 the processes moved stay in the devices root (the system cgroup
// leaves devices alone), so each Ensure there runs all its rounds, as
// upstream's.
func (s *SystemCgroup) rootProcesses(fs *cgroupfs) ([]rootProcess, error) {
	key := "devices"
	if fs.unified() {
		key = unifiedKey
	}
	dir, ok := fs.mounts[key]
	if !ok {
		return nil, fmt.Errorf("list processes of the root cgroup: the %s hierarchy is not mounted", key)
	}
	pids, err := cgroups.GetPids(dir)
	if err != nil {
		return nil, fmt.Errorf("list processes of the root cgroup: %w", err)
	}
	out := make([]rootProcess, 0, len(pids))
	for _, pid := range pids {
		_, err := os.Readlink(filepath.Join(s.opts.ProcDir, strconv.Itoa(pid), "exe"))
		out = append(out, rootProcess{PID: pid, Kernel: err != nil && errors.Is(err, os.ErrNotExist)})
	}
	return out, nil
}
