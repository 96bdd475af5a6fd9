package cm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"
)

// TestResizePod: widening sets each value to the larger of the two
// allocations, setting to the new one; a pod limit lowered below the pod
// cgroup's usage is refused before anything is written; a pod without its
// cgroup is left to EnsurePod.
func TestResizePod(t *testing.T) {
	for _, unified := range []bool{false, true} {
		f := newFakeTree(t, unified)
		_, ctx := ktesting.NewTestContext(t)
		m := f.newManager(testConfig(f))
		must(t, m.Start(ctx))
		from := podWith("r", guaranteed("c", rl("cpu", "500m", "memory", "128Mi")))
		to := podWith("r", guaranteed("c", rl("cpu", "1", "memory", "64Mi")))
		must(t, m.ResizePod(ctx, from, to, true))
		dir := "kubepods/pod" + uidOf(from)
		if f.exists(dir) {
			t.Fatalf("unified=%t: ResizePod created the pod cgroup", unified)
		}
		must(t, m.EnsurePod(ctx, from, nil))
		read := func() []string {
			if unified {
				return []string{f.read("", dir, "cpu.max"), f.read("", dir, "memory.max")}
			}
			return []string{f.read("cpu", dir, "cpu.cfs_quota_us"), f.read("memory", dir, "memory.limit_in_bytes")}
		}
		usage := filepath.Join(f.mounts["memory"], dir, "memory.usage_in_bytes")
		if unified {
			usage = filepath.Join(f.root, dir, "memory.current")
		}
		must(t, os.WriteFile(usage, []byte("100000000\n"), 0o644))
		err := m.ResizePod(ctx, from, to, true)
		if err == nil || !strings.Contains(err.Error(), "attempting to set pod memory limit (67108864) below current usage (100000000)") {
			t.Errorf("unified=%t: lowering below usage: %v", unified, err)
		}
		must(t, os.WriteFile(usage, []byte("1000\n"), 0o644))
		must(t, m.ResizePod(ctx, from, to, true))
		want := []string{"100000", "134217728"}
		if unified {
			want = []string{"100000 100000", "134217728"}
		}
		if diff := cmp.Diff(want, read()); diff != "" {
			t.Errorf("unified=%t: widened (-want +got):\n%s", unified, diff)
		}
		must(t, m.ResizePod(ctx, from, to, false))
		want = []string{"100000", "67108864"}
		if unified {
			want = []string{"100000 100000", "67108864"}
		}
		if diff := cmp.Diff(want, read()); diff != "" {
			t.Errorf("unified=%t: set (-want +got):\n%s", unified, diff)
		}
	}
}

func TestWiden(t *testing.T) {
	a := Resources{CPUShares: ptr.To[uint64](512), CPUQuota: ptr.To[int64](50000), CPUPeriod: ptr.To[uint64](100000), Memory: ptr.To[int64](200)}
	b := Resources{CPUShares: ptr.To[uint64](256), CPUQuota: ptr.To[int64](-1), CPUPeriod: ptr.To[uint64](100000), Memory: ptr.To[int64](300), Unified: map[string]string{"memory.high": "1"}}
	want := Resources{CPUShares: ptr.To[uint64](512), CPUQuota: ptr.To[int64](-1), CPUPeriod: ptr.To[uint64](100000), Memory: ptr.To[int64](300)}
	if diff := cmp.Diff(want, Widen(a, b)); diff != "" {
		t.Errorf("Widen (-want +got):\n%s", diff)
	}
	noLimit := Resources{CPUShares: ptr.To[uint64](2)}
	if got := Widen(noLimit, a); got.Memory != nil || got.CPUQuota != nil || *got.CPUShares != 512 {
		t.Errorf("Widen from no limits = %+v, want limits left alone", got)
	}
}
