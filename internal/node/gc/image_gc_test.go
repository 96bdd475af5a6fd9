package gc

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/berthk8s/berth/internal/platform/cri"
)

const mi = 1 << 20

// imageRig is a fake CRI with images of known sizes and an image
// filesystem whose availability the test sets.
type imageRig struct {
	*world
	g         *ImageGC
	ev        *events
	collected []string
	capacity  uint64
	available uint64
	// remaining and listedAt are what the last pass gave Remaining.
	remaining []string
	listedAt  time.Time
}

func newImageRig(t *testing.T, p ImagePolicy) *imageRig {
	r := &imageRig{world: newWorld(t), ev: &events{}, capacity: 1000 * mi}
	var err error
	r.g, err = NewImageGC(ImageConfig{
		Images:     r.c.Image,
		Containers: r.c.Runtime,
		FsStats: func(context.Context) (*statsapi.FsStats, error) {
			c, a := r.capacity, r.available
			return &statsapi.FsStats{CapacityBytes: &c, AvailableBytes: &a}, nil
		},
		Policy: p, SandboxImage: "registry.k8s.io/pause:3.10.1", Clock: r.clk, Recorder: r.ev,
		Collected: func(reason string) { r.collected = append(r.collected, reason) },
		Remaining: func(_ context.Context, ids []string, listedAt time.Time) {
			r.remaining, r.listedAt = sorted(ids), listedAt
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *imageRig) image(t *testing.T, ref string, size uint64, pinned bool) string {
	t.Helper()
	id := r.fake.AddImage(ref)
	r.fake.SetImage(ref, size, pinned)
	return id
}

func TestImageGCCollectBySpace(t *testing.T) {
	r := newImageRig(t, ImagePolicy{HighThresholdPercent: 85, LowThresholdPercent: 80, MinAge: 2 * time.Minute})
	busybox := r.fake.AddImage("busybox:1.36") // used by a dead container below
	pause := r.image(t, "registry.k8s.io/pause:3.10.1", 1*mi, false)
	pinned := r.image(t, "example.com/pinned:1", 100*mi, true)
	r.image(t, "example.com/old:1", 30*mi, false)
	r.image(t, "example.com/older:1", 40*mi, false)
	sb := r.sandbox(t, "a", 0)
	r.container(t, sb, "a", "app", "busybox:1.36", 0, false)
	ctx := context.Background()
	r.available = 140 * mi // 86% used: 60Mi to free

	// First sight: every image is too young to go.
	err := r.g.Collect(ctx)
	if err == nil || !strings.Contains(err.Error(), "Insufficient free disk space") {
		t.Fatalf("Collect = %v, want insufficient space", err)
	}
	if len(r.fake.Images()) != 5 {
		t.Errorf("images %v, want all 5", r.fake.Images())
	}
	// older is used once (a container of it comes and goes): it becomes
	// the most recently used of the candidates.
	r.clk.Step(time.Minute)
	c := r.container(t, sb, "a", "side", "example.com/older:1", 0, false)
	if err := r.g.Collect(ctx); err == nil {
		t.Fatal("Collect succeeded with nothing old enough")
	}
	if _, err := r.c.Runtime.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: c}); err != nil {
		t.Fatal(err)
	}
	r.ev.got = nil
	r.clk.Step(5 * time.Minute)
	r.available = 170 * mi // 83%: under the high threshold, nothing to do
	if err := r.g.Collect(ctx); err != nil {
		t.Fatalf("under the threshold: %v", err)
	}
	r.available = 140 * mi // 86%: 60Mi; old (30Mi, never used) then older (40Mi)
	if err := r.g.Collect(ctx); err != nil {
		t.Fatalf("Collect = %v", err)
	}
	want := []string{busybox, pause, pinned}
	if diff := cmp.Diff(sorted(want), r.fake.Images()); diff != "" {
		t.Errorf("images left (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{ReasonSpace, ReasonSpace}, r.collected); diff != "" {
		t.Errorf("collected (-want +got):\n%s", diff)
	}
	if len(r.ev.got) != 0 {
		t.Errorf("events %q, want none", r.ev.got)
	}
}

func TestImageGCEvents(t *testing.T) {
	r := newImageRig(t, ImagePolicy{HighThresholdPercent: 85, LowThresholdPercent: 80})
	r.image(t, "example.com/a:1", 10*mi, false)
	ctx := context.Background()
	r.available = 0
	if err := r.g.Collect(ctx); err == nil {
		t.Fatal("Collect succeeded freeing 10Mi of 200Mi")
	}
	r.capacity = 0
	if err := r.g.Collect(ctx); err == nil {
		t.Fatal("Collect succeeded with capacity 0")
	}
	if len(r.ev.got) != 2 || !strings.HasPrefix(r.ev.got[0], "Warning FreeDiskSpaceFailed Insufficient free disk space on the node's image filesystem (100% of 1000Mi used)") ||
		!strings.HasPrefix(r.ev.got[1], "Warning InvalidDiskCapacity invalid capacity 0") {
		t.Errorf("events %q", r.ev.got)
	}
}

func TestImageGCCollectByAge(t *testing.T) {
	r := newImageRig(t, ImagePolicy{HighThresholdPercent: 100, LowThresholdPercent: 80, MaxAge: time.Hour})
	r.image(t, "example.com/unused:1", 10*mi, false)
	busybox := r.fake.AddImage("busybox:1.36")
	sb := r.sandbox(t, "a", 0)
	r.container(t, sb, "a", "app", "busybox:1.36", 0, true)
	r.available = 900 * mi
	ctx := context.Background()
	r.g.began = r.clk.Now()
	if err := r.g.Collect(ctx); err != nil {
		t.Fatal(err)
	}
	r.clk.Step(time.Hour)
	if err := r.g.Collect(ctx); err != nil { // exactly MaxAge since start: not yet
		t.Fatal(err)
	}
	if len(r.fake.Images()) != 2 {
		t.Fatalf("images %v removed before MaxAge passed since start", r.fake.Images())
	}
	r.clk.Step(time.Second)
	if err := r.g.Collect(ctx); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{busybox}, r.fake.Images()); diff != "" {
		t.Errorf("images left (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{ReasonAge}, r.collected); diff != "" {
		t.Errorf("collected (-want +got):\n%s", diff)
	}
}

func TestImageGCRunDisabledAndFailing(t *testing.T) {
	r := newImageRig(t, ImagePolicy{HighThresholdPercent: 100, LowThresholdPercent: 80})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := r.g.Run(ctx); err != nil {
		t.Errorf("disabled Run = %v", err)
	}
	if len(r.fake.Calls()) != 0 {
		t.Errorf("disabled image GC called the runtime: %v", r.fake.Calls())
	}
	// Enabled and failing: the first failure is only logged, the second
	// is an ImageGCFailed event.
	r = newImageRig(t, ImagePolicy{HighThresholdPercent: 85, LowThresholdPercent: 80})
	r.g.cfg.Recorder = &eventsCh{ch: make(chan string, 4)}
	for range 3 {
		r.fake.InjectError("ListImages", cri.StatusError(cri.ErrUnavailable, "down"))
	}
	ctx, cancel = context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- r.g.Run(ctx) }()
	for !r.clk.HasWaiters() {
		time.Sleep(time.Millisecond)
	}
	ch := r.g.cfg.Recorder.(*eventsCh).ch
	select {
	case got := <-ch:
		t.Fatalf("event %q after one failure", got)
	default:
	}
	r.clk.Step(ImageGCPeriod)
	select {
	case got := <-ch:
		if !strings.HasPrefix(got, "Warning ImageGCFailed list images") {
			t.Errorf("event %q, want ImageGCFailed", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no ImageGCFailed event after two failures")
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run = %v", err)
	}
}

func sorted(ss []string) []string { return slices.Sorted(slices.Values(ss)) }

// TestImageGCSparesMountedImages: an image a container only mounts (an
// image volume) is in use, as upstream's handleImageVolumes reads the
// container's mounts: under disk pressure it stays, the unused one goes.
func TestImageGCSparesMountedImages(t *testing.T) {
	r := newImageRig(t, ImagePolicy{HighThresholdPercent: 85, LowThresholdPercent: 80})
	r.fake.AddImage("busybox:1.36")
	r.image(t, "registry.k8s.io/pause:3.10.1", 1*mi, false)
	data := r.image(t, "example.com/data:1", 100*mi, false)
	unused := r.image(t, "example.com/unused:1", 100*mi, false)
	sb := r.sandbox(t, "a", 0)
	ctx := context.Background()
	resp, err := r.c.Runtime.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{
		PodSandboxId: sb,
		Config: &runtimeapi.ContainerConfig{
			Metadata: &runtimeapi.ContainerMetadata{Name: "app"}, Image: &runtimeapi.ImageSpec{Image: "busybox:1.36"},
			Mounts: []*runtimeapi.Mount{{ContainerPath: "/data", Readonly: true, Image: &runtimeapi.ImageSpec{Image: data}}},
		},
		SandboxConfig: &runtimeapi.PodSandboxConfig{Metadata: &runtimeapi.PodSandboxMetadata{Name: "pa", Uid: "a", Namespace: "default"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.c.Runtime.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: resp.GetContainerId()}); err != nil {
		t.Fatal(err)
	}
	r.available = 100 * mi // 90% used: 100Mi to free, either image would do
	if err := r.g.Collect(ctx); err != nil {
		t.Fatalf("Collect = %v", err)
	}
	images := r.fake.Images()
	if !slices.Contains(images, data) || slices.Contains(images, unused) {
		t.Errorf("images left %v: want %s (mounted) kept and %s (unused) removed", images, data, unused)
	}
}
