package cm

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/clock"
	testclock "k8s.io/utils/clock/testing"
)

func TestSystemMovable(t *testing.T) {
	for _, tt := range []struct {
		name  string
		procs []rootProcess
		want  []int
	}{
		{"none", nil, nil},
		{"init stays", []rootProcess{{PID: 1}}, nil},
		{"kernel threads stay", []rootProcess{{PID: 2, Kernel: true}, {PID: 13, Kernel: true}}, nil},
		{"the others move, in order", []rootProcess{{PID: 1}, {PID: 2, Kernel: true}, {PID: 812}, {PID: 77, Kernel: true}, {PID: 4242}}, []int{812, 4242}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, systemMovable(tt.procs)); diff != "" {
				t.Errorf("systemMovable (-want +got):\n%s", diff)
			}
		})
	}
}

// systemHost is a fake cgroup v1 tree with a devices hierarchy whose root
// cgroup holds procs, and a /proc where the processes in exes have an
// executable (the others are kernel threads).
func systemHost(t *testing.T, procs string, exes ...string) (*fakeTree, string) {
	t.Helper()
	f := newFakeTree(t, false)
	f.mounts["devices"] = filepath.Join(f.root, "devices")
	f.mkdir(f.mounts["devices"])
	must(t, os.WriteFile(filepath.Join(f.mounts["devices"], "cgroup.procs"), []byte(procs), 0o644))
	proc := t.TempDir()
	for _, pid := range strings.Fields(procs) {
		must(t, os.MkdirAll(filepath.Join(proc, pid), 0o755))
	}
	for _, pid := range exes {
		must(t, os.Symlink("/usr/sbin/daemon", filepath.Join(proc, pid, "exe")))
	}
	return f, proc
}

func TestSystemCgroupEnsure(t *testing.T) {
	for _, tt := range []struct {
		name      string
		procs     string
		exes      []string
		wantProcs string // cgroup.procs of /system in the memory hierarchy; "-": not made
	}{
		{"a daemon moves; init and kernel threads stay", "1\n2\n77\n4242\n", []string{"1", "4242"}, "4242"},
		{"only init and kernel threads: nothing made", "1\n2\n77\n", []string{"1"}, "-"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, proc := systemHost(t, tt.procs, tt.exes...)
			s, err := NewSystemCgroup(SystemOptions{Cgroup: "/system", Mounts: f.mounts, ProcDir: proc, Clock: clock.RealClock{}})
			must(t, err)
			must(t, s.Ensure())
			// devices is skipped, as by upstream's manager (SkipDevices).
			if got := f.read("devices", "system", "cgroup.procs"); got != "-" {
				t.Errorf("devices system/cgroup.procs = %q, want none", got)
			}
			for _, sub := range []string{"memory", "cpu", "pids"} {
				if got := f.read(sub, "system", "cgroup.procs"); got != tt.wantProcs {
					t.Errorf("%s system/cgroup.procs = %q, want %q", sub, got, tt.wantProcs)
				}
			}
		})
	}
}

func TestSystemCgroupEnsureFails(t *testing.T) {
	f, proc := systemHost(t, "4242\n", "4242")
	delete(f.mounts, "devices")
	s, err := NewSystemCgroup(SystemOptions{Cgroup: "/system", Mounts: f.mounts, ProcDir: proc, Clock: clock.RealClock{}})
	must(t, err)
	if err := s.Ensure(); err == nil || !strings.Contains(err.Error(), "devices hierarchy is not mounted") {
		t.Errorf("Ensure without a devices hierarchy = %v, want it not mounted", err)
	}
}

func TestNewSystemCgroupRefusesRoot(t *testing.T) {
	for _, root := range []string{"/", ""} {
		if _, err := NewSystemCgroup(SystemOptions{Cgroup: root}); err == nil || !strings.Contains(err.Error(), `system container cannot be root ("/")`) {
			t.Errorf("NewSystemCgroup(%q) = %v, want it refused", root, err)
		}
	}
}

// TestSystemCgroupRun: Run ensures at once and again every minute.
func TestSystemCgroupRun(t *testing.T) {
	f, proc := systemHost(t, "4242\n", "4242")
	clk := testclock.NewFakeClock(time.Unix(0, 0))
	s, err := NewSystemCgroup(SystemOptions{Cgroup: "/system", Mounts: f.mounts, ProcDir: proc, Clock: clk})
	must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	waitProcs := func(want string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for f.read("memory", "system", "cgroup.procs") != want {
			if time.Now().After(deadline) {
				t.Fatalf("system/cgroup.procs never became %q", want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitProcs("4242")
	for !clk.HasWaiters() { // the first pass is over once Run's ticker exists
		time.Sleep(5 * time.Millisecond)
	}
	// Another process appears: it moves only once a minute has passed.
	must(t, os.MkdirAll(filepath.Join(proc, "5151"), 0o755))
	must(t, os.Symlink("/usr/sbin/daemon", filepath.Join(proc, "5151", "exe")))
	must(t, os.WriteFile(filepath.Join(f.mounts["devices"], "cgroup.procs"), []byte("5151\n"), 0o644))
	time.Sleep(50 * time.Millisecond) // room for a wrong extra pass; the right code never makes one
	if got := f.read("memory", "system", "cgroup.procs"); got != "4242" {
		t.Fatalf("before a minute passed, system/cgroup.procs = %q, want 4242", got)
	}
	clk.Step(systemPeriod)
	waitProcs("5151")
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run = %v", err)
	}
}
