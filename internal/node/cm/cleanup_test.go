package cm

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2/ktesting"
)

// TestCleanupLeavesBusyCgroupsAndStopsWithItsContext: a gone pod's cgroup
// that still has processes is left for a later pass at once (removing it
// would make the cgroup library retry rmdir for seconds, holding up
// housekeeping and berth's stop), and a cancelled context ends the pass.
func TestCleanupLeavesBusyCgroupsAndStopsWithItsContext(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFakeTree(t, true)
	m := f.newManager(testConfig(f))
	if err := m.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	pods := []*corev1.Pod{guaranteedTestPod, besteffortTestPod}
	for i, p := range pods {
		if err := m.EnsurePod(ctx, p, pods[:i]); err != nil {
			t.Fatalf("EnsurePod(%s): %v", p.Name, err)
		}
	}
	busy := "kubepods/besteffort/pod" + uidOf(besteffortTestPod)
	f.write(busy, "cgroup.procs", "4242\n")
	allGone := func(types.UID) bool { return true }

	err := m.Cleanup(ctx, nil, allGone)
	if err == nil || !strings.Contains(err.Error(), "1 processes still in it") {
		t.Errorf("Cleanup = %v, want the busy cgroup reported", err)
	}
	if !f.exists(busy) {
		t.Errorf("%s, which has a process, was removed", busy)
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := m.Cleanup(cancelled, nil, allGone); err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Errorf("Cleanup with a cancelled context = %v, want it to stop", err)
	}
	if !f.exists("kubepods/pod" + uidOf(guaranteedTestPod)) {
		t.Error("a cancelled pass removed a cgroup")
	}
}

// TestCleanupFindsPartlyRemovedCgroups: on cgroup v1 a gone pod's cgroup
// left in some controllers only (berth killed while destroy removed them
// one at a time; the soak's crash-volumes scenario saw one in cpu and pids
// but not memory) is found and removed from the rest.
func TestCleanupFindsPartlyRemovedCgroups(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFakeTree(t, false)
	m := f.newManager(testConfig(f))
	if err := m.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if err := m.EnsurePod(ctx, besteffortTestPod, nil); err != nil {
		t.Fatalf("EnsurePod: %v", err)
	}
	pod := "kubepods/besteffort/pod" + uidOf(besteffortTestPod)
	mem := filepath.Join(f.mounts["memory"], pod)
	entries, err := os.ReadDir(mem)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		_ = os.Remove(filepath.Join(mem, e.Name()))
	}
	if err := os.Remove(mem); err != nil {
		t.Fatal(err)
	}
	f.rmdirAsKernel(pod) // the rest's files, as the kernel's rmdir would
	if err := m.Cleanup(ctx, nil, func(types.UID) bool { return true }); err != nil {
		t.Fatalf("Cleanup: %v", err)
	}
	for sub, mount := range f.mounts {
		if _, err := os.Stat(filepath.Join(mount, pod)); !os.IsNotExist(err) {
			t.Errorf("%s's %s left after Cleanup: %v", sub, pod, err)
		}
	}
}
