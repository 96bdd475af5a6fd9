package cm

import (
	"os"
	"path/filepath"
	"testing"
)

// fakeProc makes a /proc with init and process 4242: its pid namespace
// (init's or not) and its cgroups.
func fakeProc(t *testing.T, sameNS bool, cgroupLines string) string {
	t.Helper()
	dir := t.TempDir()
	for _, p := range []string{"1/ns", "4242/ns"} {
		must(t, os.MkdirAll(filepath.Join(dir, p), 0o755))
	}
	ns := "pid:[4026531836]"
	must(t, os.Symlink(ns, filepath.Join(dir, "1/ns/pid")))
	if !sameNS {
		ns = "pid:[4026532000]"
	}
	must(t, os.Symlink(ns, filepath.Join(dir, "4242/ns/pid")))
	must(t, os.WriteFile(filepath.Join(dir, "4242/cgroup"), []byte(cgroupLines), 0o644))
	return dir
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestEnsureProcess(t *testing.T) {
	const inRoot = "5:pids:/\n4:memory:/\n3:cpu,cpuacct:/user.slice\n"
	const inKubelet = "5:pids:/kubelet.slice\n4:memory:/kubelet.slice\n3:cpu,cpuacct:/kubelet.slice\n"
	for _, tt := range []struct {
		name            string
		sameNS          bool
		cgroups, target string
		wantProcs       string // cgroup.procs of the target in the memory mount; "-" none
	}{
		{"moved", true, inRoot, "/kubelet.slice", "4242"},
		{"already there", true, inKubelet, "/kubelet.slice", "-"},
		{"no kubeletCgroups", true, inRoot, "", "-"},
		{"outside the host pid namespace: left alone", false, inRoot, "/kubelet.slice", "-"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeTree(t, false)
			proc := fakeProc(t, tt.sameNS, tt.cgroups)
			err := EnsureProcess(4242, ProcessOptions{Cgroup: tt.target, Mounts: f.mounts, ProcDir: proc})
			if err != nil {
				t.Fatalf("EnsureProcess: %v", err)
			}
			if got := f.read("memory", "kubelet.slice", "cgroup.procs"); got != tt.wantProcs {
				t.Errorf("kubelet.slice cgroup.procs = %q, want %q", got, tt.wantProcs)
			}
		})
	}
}
