package eviction

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMemcgNotifierRealCgroup arms the notifier on a memory cgroup of its
// own (cgroup v1) and charges it 32 MiB of page cache from a child
// process: the notification must fire. The cgroup and the file are
// removed at the end.
func TestMemcgNotifierRealCgroup(t *testing.T) {
	const root = "/sys/fs/cgroup/memory"
	if _, err := os.Stat(filepath.Join(root, "cgroup.event_control")); err != nil {
		t.Skipf("no cgroup v1 memory controller: %v", err)
	}
	dir := filepath.Join(root, fmt.Sprintf("berth-memcg-test-%d", os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("cannot create a memory cgroup: %v", err)
	}
	t.Cleanup(func() {
		if err := os.Remove(dir); err != nil {
			t.Errorf("remove cgroup: %v", err)
		}
	})
	threshold := readUsage(t, dir) + 16<<20
	woken := make(chan struct{}, 1)
	w, err := MemcgNotifier{}.Arm(context.Background(), dir, threshold, func() {
		select {
		case woken <- struct{}{}:
		default:
		}
	})
	if err != nil {
		t.Fatalf("arm: %v", err)
	}
	defer func() {
		if err := w.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	}()
	select {
	case <-woken:
		t.Fatal("notified before the usage crossed the threshold")
	case <-time.After(200 * time.Millisecond):
	}
	// The child joins the cgroup and writes 32 MiB: its page cache is
	// charged to the cgroup (and stays charged after it exits).
	fill := filepath.Join(t.TempDir(), "fill")
	cmd := exec.Command("sh", "-c", `echo $$ > "$1/cgroup.procs" && head -c 33554432 /dev/zero > "$2"`, "sh", dir, fill)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("charge the cgroup: %v: %s", err, out)
	}
	select {
	case <-woken:
	case <-time.After(10 * time.Second):
		t.Fatalf("no notification: usage %d, threshold %d", readUsage(t, dir), threshold)
	}
}

func readUsage(t *testing.T, dir string) int64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "memory.usage_in_bytes"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
