package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/cri/crifake"
	"github.com/berthk8s/berth/internal/memorymanager/state"
)

// TestMemoryManagerCheckpoint: berth's start writes
// <root-dir>/memory_manager_state with its policy, None, and refuses to
// start over a checkpoint of another policy, as upstream.
func TestMemoryManagerCheckpoint(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	fake := crifake.New(clock.RealClock{})
	cfg, _, _ := standalone(t, fake)

	n, err := assemble(ctx, cfg, "test", clock.RealClock{})
	if err != nil {
		t.Fatalf("assemble: %v", err)
	}
	n.close()
	c, found, err := state.Read(cfg.RootDir)
	if err != nil || !found || c.PolicyName != "None" {
		t.Fatalf("checkpoint after start = %+v, found %v, %v; want policy None", c, found, err)
	}

	if err := state.Write(cfg.RootDir, state.Checkpoint{PolicyName: "Static"}); err != nil {
		t.Fatal(err)
	}
	n, err = assemble(ctx, cfg, "test", clock.RealClock{})
	if err == nil {
		n.close()
		t.Fatal("assemble over a Static checkpoint: no error")
	}
	if want := `configured policy "None" differs from state checkpoint policy "Static"`; !strings.Contains(err.Error(), want) {
		t.Errorf("assemble error %v, want one containing %s", err, want)
	}
	if _, err := os.Stat(filepath.Join(cfg.RootDir, state.FileName)); err != nil {
		t.Errorf("checkpoint: %v", err)
	}
}
