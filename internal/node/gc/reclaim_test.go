package gc

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestDeleteUnusedImages(t *testing.T) {
	// Far under the high threshold and no maximum age: Collect removes
	// nothing, DeleteUnusedImages every unused image old enough.
	r := newImageRig(t, ImagePolicy{HighThresholdPercent: 85, LowThresholdPercent: 80, MinAge: 2 * time.Minute})
	r.available = r.capacity
	busybox := r.fake.AddImage("busybox:1.36") // used by a running container below
	pause := r.image(t, "registry.k8s.io/pause:3.10.1", 1*mi, false)
	pinned := r.image(t, "example.com/pinned:1", 100*mi, true)
	r.image(t, "example.com/unused:1", 30*mi, false)
	sb := r.sandbox(t, "a", 0)
	r.container(t, sb, "a", "app", "busybox:1.36", 0, true)
	ctx := context.Background()

	// First sight: every image is younger than MinAge.
	if err := r.g.DeleteUnusedImages(ctx); err != nil {
		t.Fatalf("DeleteUnusedImages = %v", err)
	}
	if len(r.fake.Images()) != 4 {
		t.Errorf("images %v, want all 4 at first sight", r.fake.Images())
	}
	r.clk.Step(3 * time.Minute)
	young := r.image(t, "example.com/young:1", 50*mi, false)
	if err := r.g.Collect(ctx); err != nil {
		t.Fatalf("Collect = %v", err)
	}
	if len(r.fake.Images()) != 5 {
		t.Errorf("Collect under the threshold removed images: %v", r.fake.Images())
	}
	if err := r.g.DeleteUnusedImages(ctx); err != nil {
		t.Fatalf("DeleteUnusedImages = %v", err)
	}
	want := []string{busybox, pause, pinned, young}
	if diff := cmp.Diff(sorted(want), r.fake.Images()); diff != "" {
		t.Errorf("images left (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(sorted(want), r.remaining); diff != "" || !r.listedAt.Equal(r.clk.Now()) {
		t.Errorf("Remaining got (-want +got):\n%s listed at %v, want %v", diff, r.listedAt, r.clk.Now())
	}
	if diff := cmp.Diff([]string{ReasonSpace}, r.collected); diff != "" {
		t.Errorf("collected (-want +got):\n%s", diff)
	}
	if len(r.ev.got) != 0 {
		t.Errorf("events %q, want none", r.ev.got)
	}
}

func TestChooseAllUnused(t *testing.T) {
	now := t0.Add(time.Hour)
	p := ImagePolicy{HighThresholdPercent: 85, LowThresholdPercent: 80, MinAge: time.Minute}
	in := []Image{
		{ID: "a", Size: 1 << 40, FirstDetected: t0},
		{ID: "young", Size: 5, FirstDetected: now.Add(-time.Second)},
		{ID: "b", Size: 1 << 40, FirstDetected: t0},
	}
	got, freed := ChooseAllUnused(in, p, now)
	var ids []string
	for _, img := range got {
		ids = append(ids, img.ID)
	}
	if diff := cmp.Diff([]string{"a", "b"}, ids); diff != "" || freed != 2<<40 {
		t.Errorf("chose %v freeing %d (-want +got):\n%s", ids, freed, diff)
	}
}

func TestDeleteAllUnusedContainers(t *testing.T) {
	w := newWorld(t)
	sb := w.sandbox(t, "a", 0)
	a0 := w.container(t, sb, "a", "app", "busybox:1.36", 0, false)
	a1 := w.container(t, sb, "a", "app", "busybox:1.36", 1, false)
	a2 := w.container(t, sb, "a", "app", "busybox:1.36", 2, true)
	// A terminated pod not deleted: its runtime may go, its content not.
	termSB := w.sandbox(t, "term", 0)
	t0c := w.container(t, termSB, "term", "app", "busybox:1.36", 0, false)
	if _, err := w.c.Runtime.StopPodSandbox(context.Background(), &runtimeapi.StopPodSandboxRequest{PodSandboxId: termSB}); err != nil {
		t.Fatal(err)
	}
	var cleaned []string
	g, err := NewContainerGC(ContainerConfig{
		Runtime: fakeRuntime{w.c},
		CleanLogs: func(_ context.Context, id string) error {
			cleaned = append(cleaned, id)
			return nil
		},
		Policy:           ContainerPolicy{MinAge: time.Hour, MaxPerPodContainer: 1, MaxContainers: -1},
		SourcesReady:     func() bool { return true },
		ContentRemovable: func(types.UID) bool { return false },
		RuntimeRemovable: func(uid types.UID) bool { return uid == "term" },
		Clock:            w.clk, Recorder: &events{},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	w.clk.Step(2 * time.Hour)
	if err := g.Collect(ctx); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{a1, a2, t0c}, containerIDs(w)); diff != "" {
		t.Errorf("containers left by Collect (-want +got):\n%s", diff)
	}
	if err := g.DeleteAllUnusedContainers(ctx); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{a1, a2}, containerIDs(w)); diff != "" {
		t.Errorf("containers left (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{sb}, sandboxIDs(w)); diff != "" {
		t.Errorf("sandboxes left (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{a0, t0c}, cleaned); diff != "" {
		t.Errorf("logs cleaned (-want +got):\n%s", diff)
	}
}

// TestImageGCReclaimConcurrently: the eviction manager's goroutine and
// Run's share the records (run with -race).
func TestImageGCReclaimConcurrently(t *testing.T) {
	r := newImageRig(t, ImagePolicy{HighThresholdPercent: 85, LowThresholdPercent: 80})
	r.available = r.capacity
	r.image(t, "example.com/unused:1", 30*mi, false)
	ctx := context.Background()
	done := make(chan error)
	go func() { done <- r.g.Collect(ctx) }()
	if err := r.g.DeleteUnusedImages(ctx); err != nil {
		t.Errorf("DeleteUnusedImages = %v", err)
	}
	if err := <-done; err != nil {
		t.Errorf("Collect = %v", err)
	}
	if len(r.fake.Images()) != 0 { // busybox, used by no container, goes too
		t.Errorf("images %v, want none", r.fake.Images())
	}
}
