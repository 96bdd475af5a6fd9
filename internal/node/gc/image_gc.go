package gc

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"google.golang.org/grpc"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/clock"
)

// ImageGCPeriod is upstream's ImageGCPeriod.
const ImageGCPeriod = 5 * time.Minute

// ImageService is what the image GC asks of the CRI image service.
type ImageService interface {
	ListImages(ctx context.Context, in *runtimeapi.ListImagesRequest, opts ...grpc.CallOption) (*runtimeapi.ListImagesResponse, error)
	ImageStatus(ctx context.Context, in *runtimeapi.ImageStatusRequest, opts ...grpc.CallOption) (*runtimeapi.ImageStatusResponse, error)
	RemoveImage(ctx context.Context, in *runtimeapi.RemoveImageRequest, opts ...grpc.CallOption) (*runtimeapi.RemoveImageResponse, error)
}

// ContainerLister is the CRI runtime's ListContainers, and its
// ContainerStatus for the images containers mount (image volumes).
type ContainerLister interface {
	ListContainers(ctx context.Context, in *runtimeapi.ListContainersRequest, opts ...grpc.CallOption) (*runtimeapi.ListContainersResponse, error)
	ContainerStatus(ctx context.Context, in *runtimeapi.ContainerStatusRequest, opts ...grpc.CallOption) (*runtimeapi.ContainerStatusResponse, error)
}

// ImageConfig is what NewImageGC needs.
type ImageConfig struct {
	Images ImageService
	// Containers lists every container of the runtime, in any state and
	// whoever made it (as upstream, which counts containers without the
	// kubelet's labels too): an image any of them uses, or mounts as an
	// image volume, is in use.
	Containers ContainerLister
	// FsStats reports the image filesystem: capacity and available bytes
	// of the filesystem holding it (stats.Provider.ImageFsStats).
	FsStats func(ctx context.Context) (*statsapi.FsStats, error)
	Policy  ImagePolicy
	// SandboxImage is never removed: containerd before 1.7 does not pin it.
	SandboxImage string
	Clock        clock.WithTicker
	Recorder     NodeRecorder
	// Collected counts a removed image by reason (ReasonAge, ReasonSpace).
	Collected func(reason string)
	// Remaining, if set, is given the IDs of the images left after each
	// pass of Collect or DeleteUnusedImages and the time taken before
	// they were listed (upstream's post-GC hook, by which the image pull
	// records forget images that are gone).
	Remaining func(ctx context.Context, ids []string, listedAt time.Time)
}

// ImageGC removes unused images when the image filesystem is too full or
// they are too old. Run is its only goroutine; Collect (called by Run, or
// by a test instead of Run) and DeleteUnusedImages (the eviction manager's
// goroutine) may run at the same time and are serialized by mu.
type ImageGC struct {
	cfg ImageConfig
	// mu guards records and is held for a whole collection, so two never
	// list and remove at once.
	mu sync.Mutex
	// records are the images seen, by ID, with when berth first saw each
	// and last saw it used.
	records map[string]*Image
	// began is when Run started: no image goes for age before MaxAge has
	// passed since.
	began time.Time
}

// NewImageGC validates cfg. It starts nothing.
func NewImageGC(cfg ImageConfig) (*ImageGC, error) {
	if cfg.Images == nil || cfg.Containers == nil || cfg.FsStats == nil || cfg.Clock == nil || cfg.Recorder == nil || cfg.Collected == nil {
		return nil, errors.New("create image GC: every Config field is required")
	}
	p := cfg.Policy
	if p.HighThresholdPercent < 0 || p.HighThresholdPercent > 100 || p.LowThresholdPercent < 0 ||
		p.LowThresholdPercent > p.HighThresholdPercent {
		return nil, fmt.Errorf("create image GC: invalid thresholds high %d, low %d", p.HighThresholdPercent, p.LowThresholdPercent)
	}
	return &ImageGC{cfg: cfg, records: map[string]*Image{}}, nil
}

// Run collects every ImageGCPeriod until ctx ends; with a disabled policy
// it only waits. A failure is logged; repeated failures are recorded as an
// ImageGCFailed event, as upstream.
func (g *ImageGC) Run(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	if g.cfg.Policy.Disabled() {
		logger.V(2).Info("ImageGCHighThresholdPercent is set 100 and ImageMaximumGCAge is 0, image GC is disabled")
		<-ctx.Done()
		return nil
	}
	g.began = g.cfg.Clock.Now()
	t := g.cfg.Clock.NewTicker(ImageGCPeriod)
	defer t.Stop()
	failedBefore := false
	for {
		err := g.Collect(ctx)
		switch {
		case err != nil && failedBefore:
			logger.Error(err, "Image garbage collection failed multiple times in a row")
			g.cfg.Recorder.NodeEventf(corev1.EventTypeWarning, eventImageGCFailed, "%s", err.Error())
		case err != nil:
			logger.Error(err, "Image garbage collection failed once. Stats initialization may not have completed yet")
		}
		failedBefore = err != nil
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		}
	}
}

// Collect removes images unused beyond MaxAge, then, if the image
// filesystem is at or over the high threshold, unused images oldest first
// down to the low threshold, as upstream's GarbageCollect.
func (g *ImageGC) Collect(ctx context.Context) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.cfg.Clock.Now()
	images, err := g.detect(ctx, now)
	if err != nil {
		return err
	}
	defer g.afterPass(ctx, now)
	old, rest := ChooseByAge(EvictionOrder(images), g.cfg.Policy, g.began, now)
	if _, err := g.remove(ctx, old, ReasonAge); err != nil {
		return fmt.Errorf("wanted to free images older than %v, encountered errors in image deletion: %w", g.cfg.Policy.MaxAge, err)
	}
	fs, err := g.cfg.FsStats(ctx)
	if err != nil {
		return fmt.Errorf("read image filesystem stats: %w", err)
	}
	var capacity, available int64
	if fs.CapacityBytes != nil {
		capacity = int64(*fs.CapacityBytes)
	}
	if fs.AvailableBytes != nil {
		available = int64(*fs.AvailableBytes)
	}
	c, err := ChooseBySpace(rest, g.cfg.Policy, capacity, available, now)
	if err != nil {
		g.cfg.Recorder.NodeEventf(corev1.EventTypeWarning, eventInvalidDiskCapacity, "%s", err.Error())
		return err
	}
	if c.ToFree == 0 && len(c.Remove) == 0 {
		return nil
	}
	klog.FromContext(ctx).Info("Disk usage on image filesystem is over the high threshold, trying to free bytes down to the low threshold",
		"usage", c.UsagePercent, "highThreshold", g.cfg.Policy.HighThresholdPercent, "amountToFree", c.ToFree, "lowThreshold", g.cfg.Policy.LowThresholdPercent)
	if _, err := g.remove(ctx, c.Remove, ReasonSpace); err != nil {
		return fmt.Errorf("wanted to free %d bytes, encountered errors in image deletion: %w", c.ToFree, err)
	}
	if c.Short() {
		msg := fmt.Sprintf("Insufficient free disk space on the node's image filesystem (%d%% of %s used). "+
			"Failed to free sufficient space by deleting unused images (freed %d bytes). "+
			"Investigate disk usage, as it could be used by active images, logs, volumes, or other data.",
			c.UsagePercent, formatSize(capacity), c.Freed)
		g.cfg.Recorder.NodeEventf(corev1.EventTypeWarning, eventFreeDiskSpaceFailed, "%s", msg)
		return errors.New(msg)
	}
	return nil
}

// DeleteUnusedImages removes every image ChooseAllUnused picks (unused,
// unpinned, not the sandbox image, detected at least MinAge ago), whatever
// the disk usage, as upstream's DeleteUnusedImages for the eviction
// manager's node-level reclaim. Removed images count with reason "space",
// as upstream; no event is recorded.
func (g *ImageGC) DeleteUnusedImages(ctx context.Context) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	klog.FromContext(ctx).Info("Attempting to delete unused images")
	now := g.cfg.Clock.Now()
	images, err := g.detect(ctx, now)
	if err != nil {
		return err
	}
	defer g.afterPass(ctx, now)
	remove, _ := ChooseAllUnused(EvictionOrder(images), g.cfg.Policy, now)
	freed, err := g.remove(ctx, remove, ReasonSpace)
	if err != nil {
		return fmt.Errorf("delete unused images: freed %d bytes, encountered errors in image deletion: %w", freed, err)
	}
	klog.FromContext(ctx).V(2).Info("Deleted unused images", "count", len(remove), "freedBytes", freed)
	return nil
}

// afterPass hands the images left to Remaining. Callers hold mu, so
// records are this pass's: what detect listed less what was removed.
func (g *ImageGC) afterPass(ctx context.Context, listedAt time.Time) {
	if g.cfg.Remaining == nil {
		return
	}
	ids := make([]string, 0, len(g.records))
	for id := range g.records {
		ids = append(ids, id)
	}
	g.cfg.Remaining(ctx, ids, listedAt)
}

// remove removes images, forgetting and counting each one removed; it goes
// on past a failure and returns the bytes freed and every error. Callers
// hold mu.
func (g *ImageGC) remove(ctx context.Context, images []Image, reason string) (int64, error) {
	var errs []error
	var freed int64
	for _, img := range images {
		klog.FromContext(ctx).Info("Removing image to free bytes", "imageID", img.ID, "size", img.Size, "reason", reason)
		if _, err := g.cfg.Images.RemoveImage(ctx, &runtimeapi.RemoveImageRequest{Image: &runtimeapi.ImageSpec{Image: img.ID}}); err != nil {
			errs = append(errs, fmt.Errorf("remove image %q: %w", img.ID, err))
			continue
		}
		delete(g.records, img.ID)
		freed += img.Size
		g.cfg.Collected(reason)
	}
	return freed, errors.Join(errs...)
}

// formatSize renders a byte count as upstream's message does (a binary
// quantity).
func formatSize(n int64) string {
	return resource.NewQuantity(n, resource.BinarySI).String()
}
