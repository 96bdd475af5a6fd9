package gc

import (
	"context"
	"errors"
	"fmt"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/berthk8s/berth/internal/platform/cri"
)

// detect lists images and pods and brings the records up to date, as
// upstream's detectImages: a new image is first detected now; an image a
// container (in any state) uses or mounts (an image volume: the
// container's status says, as upstream's handleImageVolumes reads it), or
// the sandbox image, is last used now;
// sizes and pinning come from the listing; records of images gone are
// dropped. It returns a snapshot of the records.
func (g *ImageGC) detect(ctx context.Context, now time.Time) ([]Image, error) {
	list, err := g.cfg.Images.ListImages(ctx, &runtimeapi.ListImagesRequest{})
	if err != nil {
		return nil, fmt.Errorf("list images: %w", err)
	}
	cs, err := g.cfg.Containers.ListContainers(ctx, &runtimeapi.ListContainersRequest{})
	if err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	inUse := map[string]bool{}
	for _, c := range cs.GetContainers() {
		for _, ref := range []string{c.GetImageId(), c.GetImageRef()} {
			if ref != "" {
				inUse[ref] = true
			}
		}
		if err := g.mountedImages(ctx, c.GetId(), inUse); err != nil {
			return nil, err
		}
	}
	if g.cfg.SandboxImage != "" {
		st, err := g.cfg.Images.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: g.cfg.SandboxImage}})
		if err != nil {
			return nil, fmt.Errorf("read status of sandbox image %q: %w", g.cfg.SandboxImage, err)
		}
		if id := st.GetImage().GetId(); id != "" {
			inUse[id] = true
		}
	}
	return updateRecords(g.records, list.GetImages(), inUse, now), nil
}

// mountedImages marks the images container id mounts as image volumes in
// use. A container removed since the listing mounts nothing; any other
// failure fails the detection, so that no image is removed on a guess.
func (g *ImageGC) mountedImages(ctx context.Context, id string, inUse map[string]bool) error {
	st, err := g.cfg.Containers.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id})
	if errors.Is(err, cri.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read status of container %s: %w", id, err)
	}
	for _, m := range st.GetStatus().GetMounts() {
		if ref := m.GetImage().GetImage(); ref != "" {
			inUse[ref] = true
		}
	}
	return nil
}

// updateRecords applies one listing to records (see detect) and returns
// a copy of every record, InUse set from inUse.
func updateRecords(records map[string]*Image, images []*runtimeapi.Image, inUse map[string]bool, now time.Time) []Image {
	present := map[string]bool{}
	out := make([]Image, 0, len(images))
	for _, img := range images {
		id := img.GetId()
		present[id] = true
		r := records[id]
		if r == nil {
			r = &Image{ID: id, FirstDetected: now}
			records[id] = r
		}
		r.InUse = usedBy(img, inUse)
		if r.InUse {
			r.LastUsed = now
		}
		r.Size = int64(img.GetSize())
		r.Pinned = img.GetPinned()
		out = append(out, *r)
	}
	for id := range records {
		if !present[id] {
			delete(records, id)
		}
	}
	return out
}

// usedBy reports whether inUse names img by its ID, a tag or a digest.
func usedBy(img *runtimeapi.Image, inUse map[string]bool) bool {
	if inUse[img.GetId()] {
		return true
	}
	for _, refs := range [][]string{img.GetRepoTags(), img.GetRepoDigests()} {
		for _, r := range refs {
			if inUse[r] {
				return true
			}
		}
	}
	return false
}
