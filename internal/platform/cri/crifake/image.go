package crifake

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// fakeImageSize is the size every fake image reports.
const fakeImageSize = 4 << 20

// image is one image in the store. Guarded by Fake.mu.
type image struct {
	// id is "sha256:<hex>", derived from the first ref the image had.
	id string
	// repoTags are normalized refs ("docker.io/library/busybox:1.36"),
	// repoDigests the matching "repo@sha256:<hex>".
	repoTags    []string
	repoDigests []string
	// size is what the image reports (fakeImageSize unless set); pinned
	// is CRI Image.pinned.
	size   uint64
	pinned bool
}

// NormalizeRef returns ref in the canonical form containerd stores it in:
// a registry domain (docker.io by default), "library/" for official Docker
// Hub images, and a ":latest" tag when neither tag nor digest is given.
// "busybox:1.36" becomes "docker.io/library/busybox:1.36".
func NormalizeRef(ref string) string {
	if strings.HasPrefix(ref, "sha256:") {
		return ref
	}
	name, rest := ref, ""
	if i := strings.IndexByte(ref, '@'); i >= 0 {
		name, rest = ref[:i], ref[i:]
	}
	if rest == "" {
		// A tag is a colon after the last slash.
		if i := strings.LastIndexByte(name, ':'); i > strings.LastIndexByte(name, '/') {
			name, rest = name[:i], name[i:]
		} else {
			rest = ":latest"
		}
	}
	domain, path := "docker.io", name
	if i := strings.IndexByte(name, '/'); i >= 0 {
		first := name[:i]
		if strings.ContainsAny(first, ".:") || first == "localhost" {
			domain, path = first, name[i+1:]
		}
	}
	if domain == "index.docker.io" {
		domain = "docker.io"
	}
	if domain == "docker.io" && !strings.Contains(path, "/") {
		path = "library/" + path
	}
	return domain + "/" + path + rest
}

// repository strips the tag or digest from a normalized ref.
func repository(ref string) string {
	if i := strings.IndexByte(ref, '@'); i >= 0 {
		return ref[:i]
	}
	if i := strings.LastIndexByte(ref, ':'); i > strings.LastIndexByte(ref, '/') {
		return ref[:i]
	}
	return ref
}

func digestOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// addImage stores ref (or adds ref as a tag of the image it already names)
// and returns the image. Callers hold mu.
func (f *Fake) addImage(ref string) *image {
	ref = NormalizeRef(ref)
	if img := f.findImage(ref); img != nil {
		return img
	}
	img := &image{
		id:          digestOf("config " + ref),
		repoTags:    []string{ref},
		repoDigests: []string{repository(ref) + "@" + digestOf("manifest "+ref)},
		size:        fakeImageSize,
	}
	f.world.images[img.id] = img
	return img
}

// findImage resolves an image ID, a ref or a repo digest as containerd's
// local resolution does; nil when absent. Callers hold mu.
func (f *Fake) findImage(ref string) *image {
	if img, ok := f.world.images[ref]; ok {
		return img
	}
	if img, ok := f.world.images["sha256:"+ref]; ok {
		return img
	}
	norm := NormalizeRef(ref)
	for _, img := range f.world.images {
		for _, r := range append(append([]string(nil), img.repoTags...), img.repoDigests...) {
			if r == norm {
				return img
			}
		}
	}
	return nil
}

func (img *image) api() *runtimeapi.Image {
	return &runtimeapi.Image{
		Id:          img.id,
		RepoTags:    append([]string(nil), img.repoTags...),
		RepoDigests: append([]string(nil), img.repoDigests...),
		Size:        img.size,
		Spec:        &runtimeapi.ImageSpec{Image: img.id},
		Pinned:      img.pinned,
	}
}

// ListImages lists every image. Like containerd it ignores the filter.
func (f *Fake) ListImages(_ context.Context, _ *runtimeapi.ListImagesRequest) (*runtimeapi.ListImagesResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*runtimeapi.Image
	for _, img := range f.world.images {
		out = append(out, img.api())
	}
	return &runtimeapi.ListImagesResponse{Images: out}, nil
}

// ImageStatus reports an image, or a nil image (and no error) when absent.
func (f *Fake) ImageStatus(_ context.Context, req *runtimeapi.ImageStatusRequest) (*runtimeapi.ImageStatusResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	img := f.findImage(req.GetImage().GetImage())
	if img == nil {
		return &runtimeapi.ImageStatusResponse{}, nil
	}
	return &runtimeapi.ImageStatusResponse{Image: img.api()}, nil
}

// PullImage makes a pullable ref present and returns its image ID, as
// containerd does. Other refs fail with the configured pull error or a
// NotFound like a registry's.
func (f *Fake) PullImage(_ context.Context, req *runtimeapi.PullImageRequest) (*runtimeapi.PullImageResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ref := NormalizeRef(req.GetImage().GetImage())
	if !f.knobs.pullable[ref] && !f.knobs.sim.pullAll {
		if f.knobs.pullError != nil {
			return nil, f.knobs.pullError
		}
		return nil, notFoundError{msg: fmt.Sprintf("failed to pull and unpack image %q: failed to resolve reference %q: %s: not found", ref, ref, ref)}
	}
	return &runtimeapi.PullImageResponse{ImageRef: f.addImage(ref).id}, nil
}

// RemoveImage removes the image a ref names, with all its tags. Removing an
// absent image succeeds, as in containerd.
func (f *Fake) RemoveImage(_ context.Context, req *runtimeapi.RemoveImageRequest) (*runtimeapi.RemoveImageResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if img := f.findImage(req.GetImage().GetImage()); img != nil {
		delete(f.world.images, img.id)
	}
	return &runtimeapi.RemoveImageResponse{}, nil
}

// ImageFsInfo reports one image filesystem holding every image.
func (f *Fake) ImageFsInfo(_ context.Context, _ *runtimeapi.ImageFsInfoRequest) (*runtimeapi.ImageFsInfoResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, used := uint64(len(f.world.images)), uint64(0)
	for _, img := range f.world.images {
		used += img.size
	}
	usage := &runtimeapi.FilesystemUsage{
		Timestamp:  f.now(),
		FsId:       &runtimeapi.FilesystemIdentifier{Mountpoint: "/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs"},
		UsedBytes:  &runtimeapi.UInt64Value{Value: used},
		InodesUsed: &runtimeapi.UInt64Value{Value: n * 100},
	}
	return &runtimeapi.ImageFsInfoResponse{ImageFilesystems: []*runtimeapi.FilesystemUsage{usage}}, nil
}
