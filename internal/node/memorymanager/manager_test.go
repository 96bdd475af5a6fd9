package memorymanager

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/node/memorymanager/state"
	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

func TestNewWritesTheCheckpoint(t *testing.T) {
	dir := t.TempDir()
	m, err := New(Config{Policy: PolicyNone, StateDir: dir})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if m.Policy() != PolicyNone {
		t.Errorf("manager policy %q, want None", m.Policy())
	}
	got, found, err := state.Read(dir)
	if err != nil || !found {
		t.Fatalf("Read = found %v, %v", found, err)
	}
	want := state.Checkpoint{PolicyName: "None", MachineState: state.NUMANodeMap{}, Entries: state.ContainerMemoryAssignments{}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("checkpoint (-want +got):\n%s", d)
	}
	// A second start keeps it.
	if _, err := New(Config{Policy: PolicyNone, StateDir: dir}); err != nil {
		t.Errorf("New over its own checkpoint: %v", err)
	}
}

func TestNewRefusesAnotherPolicysCheckpoint(t *testing.T) {
	dir := t.TempDir()
	c := state.Checkpoint{PolicyName: "Static", MachineState: state.NUMANodeMap{0: {MemoryMap: map[v1.ResourceName]*state.MemoryTable{v1.ResourceMemory: {TotalMemSize: 1}}}}}
	if err := state.Write(dir, c); err != nil {
		t.Fatal(err)
	}
	_, err := New(Config{Policy: PolicyNone, StateDir: dir})
	want := `could not restore state from checkpoint: [memorymanager] configured policy "None" differs from state checkpoint policy "Static", please drain this node and delete the memory manager checkpoint file "` + filepath.Join(dir, state.FileName) + `" before restarting Kubelet`
	if err == nil || err.Error() != want {
		t.Errorf("New error = %v\nwant %s", err, want)
	}
	// The file is left as it was.
	if got, _, _ := state.Read(dir); got.PolicyName != "Static" {
		t.Errorf("checkpoint policy now %q, want Static kept", got.PolicyName)
	}
}

func TestNewRefusesACorruptCheckpoint(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, state.FileName), []byte(`{"policyName":"None","checksum":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{Policy: PolicyNone, StateDir: dir}); err == nil || !strings.Contains(err.Error(), "please drain this node") {
		t.Errorf("New error = %v, want upstream's drain advice", err)
	}
}

// TestWordingIsUpstreams pins the start errors to upstream's state
// package.
func TestWordingIsUpstreams(t *testing.T) {
	path := filepath.Join(upstreamsrc.New(t).ModuleDir("k8s.io/kubernetes"), "pkg/kubelet/cm/memorymanager/state/state_checkpoint.go")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		`"[memorymanager] configured policy %q differs from state checkpoint policy %q"`,
		`"could not restore state from checkpoint: %v, please drain this node and delete the memory manager checkpoint file %q before restarting Kubelet"`,
		`memoryManagerStateFileName = "memory_manager_state"`,
	} {
		src := string(b)
		if strings.Contains(w, "memoryManagerStateFileName") {
			mb, err := os.ReadFile(filepath.Join(filepath.Dir(filepath.Dir(path)), "memory_manager.go"))
			if err != nil {
				t.Fatal(err)
			}
			src = string(mb)
		}
		if !strings.Contains(src, w) {
			t.Errorf("upstream no longer has %s", w)
		}
	}
}
