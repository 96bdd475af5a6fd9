package critest

import (
	"errors"
	"slices"
	"strings"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/berthk8s/berth/internal/platform/cri"
)

// unknownID looks like a runtime ID and names nothing.
const unknownID = "0000000000000000000000000000000000000000000000000000000000000bad"

func (s *suite) testVerify(t *testing.T) {
	ctx := testContext(t)
	info, err := s.Client.Verify(ctx)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if info.RuntimeAPIVersion != "v1" || info.RuntimeName == "" || info.RuntimeVersion == "" {
		t.Errorf("Verify = %+v, want CRI v1 with a runtime name and version", info)
	}
	if !info.RuntimeReady {
		t.Errorf("Verify: runtime not ready: %s", info.RuntimeMessage)
	}
	if !slices.Contains([]string{"", cri.CgroupDriverSystemd, cri.CgroupDriverCgroupfs}, info.CgroupDriver) {
		t.Errorf("Verify: CgroupDriver = %q", info.CgroupDriver)
	}
	if !info.NetworkReady && info.NetworkMessage == "" {
		t.Error("Verify: network not ready without a message")
	}
	st, err := s.Client.Status(ctx)
	if err != nil {
		t.Fatalf("Status: %v", err)
	}
	if st.RuntimeReady != info.RuntimeReady || st.NetworkReady != info.NetworkReady {
		t.Errorf("Status = %+v, disagrees with Verify = %+v", st, info)
	}
}

func (s *suite) testImages(t *testing.T) {
	ctx := testContext(t)
	status := func(ref string) *runtimeapi.Image {
		t.Helper()
		resp, err := s.Client.Image.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: ref}})
		if err != nil {
			t.Fatalf("ImageStatus %q: %v", ref, err)
		}
		return resp.GetImage()
	}
	img := status(s.Image)
	if img == nil {
		t.Fatalf("ImageStatus %q: image absent, the suite needs it present", s.Image)
	}
	if img.GetId() == "" || !slices.Contains(img.GetRepoTags(), s.Image) {
		t.Errorf("ImageStatus %q = id %q tags %q, want an ID and the ref among the tags", s.Image, img.GetId(), img.GetRepoTags())
	}
	// Short Docker Hub names resolve to the same image, as do image IDs.
	if short, ok := strings.CutPrefix(s.Image, "docker.io/library/"); ok {
		if got := status(short); got.GetId() != img.GetId() {
			t.Errorf("ImageStatus %q = %q, want %q", short, got.GetId(), img.GetId())
		}
	}
	if got := status(img.GetId()); got.GetId() != img.GetId() {
		t.Errorf("ImageStatus by ID %q = %q", img.GetId(), got.GetId())
	}
	if got := status("docker.io/library/berth-absent-image:0"); got != nil {
		t.Errorf("ImageStatus of an absent image = %v, want nil", got)
	}
	if s.SandboxImage != "" && status(s.SandboxImage) == nil {
		t.Errorf("sandbox image %q absent", s.SandboxImage)
	}
	list, err := s.Client.Image.ListImages(ctx, &runtimeapi.ListImagesRequest{})
	if err != nil {
		t.Fatalf("ListImages: %v", err)
	}
	if !slices.ContainsFunc(list.GetImages(), func(i *runtimeapi.Image) bool { return i.GetId() == img.GetId() }) {
		t.Errorf("ListImages lacks %s", img.GetId())
	}
	fs, err := s.Client.Image.ImageFsInfo(ctx, &runtimeapi.ImageFsInfoRequest{})
	if err != nil {
		t.Fatalf("ImageFsInfo: %v", err)
	}
	if len(fs.GetImageFilesystems()) == 0 {
		t.Error("ImageFsInfo reports no image filesystem")
	}
}

// testNotFound checks how unknown IDs are answered: status and start
// calls fail with ErrNotFound; stop calls either fail with ErrNotFound
// (containerd 1.6, the fake) or succeed (containerd 2: the CRI defines
// StopContainer and StopPodSandbox as idempotent, and berth takes either
// answer as stopped); removals succeed (they are idempotent).
func (s *suite) testNotFound(t *testing.T) {
	ctx := testContext(t)
	rt := s.Client.Runtime
	notFound := map[string]error{}
	_, notFound["ContainerStatus"] = rt.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: unknownID})
	_, notFound["PodSandboxStatus"] = rt.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: unknownID})
	_, notFound["StartContainer"] = rt.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: unknownID})
	stopped := map[string]error{}
	_, stopped["StopContainer"] = rt.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: unknownID})
	_, stopped["StopPodSandbox"] = rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: unknownID})
	for method, err := range stopped {
		if err != nil {
			notFound[method] = err
		}
	}
	for method, err := range notFound {
		if !errors.Is(err, cri.ErrNotFound) {
			t.Errorf("%s of an unknown ID: error %v, want cri.ErrNotFound", method, err)
		} else if !strings.Contains(err.Error(), method) {
			t.Errorf("%s of an unknown ID: error %q does not name the method", method, err)
		}
	}
	if _, err := rt.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: unknownID}); err != nil {
		t.Errorf("RemoveContainer of an unknown ID: %v, want success", err)
	}
	if _, err := rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: unknownID}); err != nil {
		t.Errorf("RemovePodSandbox of an unknown ID: %v, want success", err)
	}
}
