package crifake_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berthk8s/berth/internal/platform/cri"
	"github.com/berthk8s/berth/internal/platform/cri/crifake"
)

var epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// world is a fake with busybox present, served to a client.
type world struct {
	f   *crifake.Fake
	clk *clocktesting.FakeClock
	c   *cri.Client
	ctx context.Context
}

func newWorld(t *testing.T) *world {
	clk := clocktesting.NewFakeClock(epoch)
	f := crifake.New(clk)
	f.AddImage("busybox:1.36")
	return &world{f: f, clk: clk, c: f.Client(t), ctx: context.Background()}
}

func sandboxConfig(name string, hostNetwork bool) *runtimeapi.PodSandboxConfig {
	cfg := &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: name, Uid: "uid-" + name, Namespace: "default"},
		LogDirectory: "/var/log/pods/default_" + name,
		Labels:       map[string]string{"pod": name},
	}
	if hostNetwork {
		cfg.Linux = &runtimeapi.LinuxPodSandboxConfig{SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
			NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_NODE},
		}}
	}
	return cfg
}

func (w *world) sandbox(t *testing.T, name string, hostNetwork bool) string {
	t.Helper()
	resp, err := w.c.Runtime.RunPodSandbox(w.ctx, &runtimeapi.RunPodSandboxRequest{Config: sandboxConfig(name, hostNetwork)})
	if err != nil {
		t.Fatalf("RunPodSandbox: %v", err)
	}
	return resp.GetPodSandboxId()
}

func (w *world) runningContainer(t *testing.T, sandboxID, name string) string {
	t.Helper()
	resp, err := w.c.Runtime.CreateContainer(w.ctx, &runtimeapi.CreateContainerRequest{
		PodSandboxId:  sandboxID,
		Config:        &runtimeapi.ContainerConfig{Metadata: &runtimeapi.ContainerMetadata{Name: name}, Image: &runtimeapi.ImageSpec{Image: "busybox:1.36"}, LogPath: name + "/0.log"},
		SandboxConfig: &runtimeapi.PodSandboxConfig{LogDirectory: "/var/log/pods/x"},
	})
	if err != nil {
		t.Fatalf("CreateContainer: %v", err)
	}
	if _, err := w.c.Runtime.StartContainer(w.ctx, &runtimeapi.StartContainerRequest{ContainerId: resp.GetContainerId()}); err != nil {
		t.Fatalf("StartContainer: %v", err)
	}
	return resp.GetContainerId()
}

func TestCallLogAndInjection(t *testing.T) {
	w := newWorld(t)
	w.f.InjectError("Version", cri.StatusError(cri.ErrUnavailable, "down"))
	w.f.InjectError("Version", errors.New("plain"))
	_, err1 := w.c.Runtime.Version(w.ctx, &runtimeapi.VersionRequest{})
	_, err2 := w.c.Runtime.Version(w.ctx, &runtimeapi.VersionRequest{})
	_, err3 := w.c.Runtime.Version(w.ctx, &runtimeapi.VersionRequest{})
	if !errors.Is(err1, cri.ErrUnavailable) {
		t.Errorf("first injected error = %v, want cri.ErrUnavailable", err1)
	}
	if err2 == nil || errors.Is(err2, cri.ErrUnavailable) {
		t.Errorf("second injected error = %v, want an unclassified error", err2)
	}
	if err3 != nil {
		t.Errorf("third call = %v, want success: injections are one-shot", err3)
	}
	if _, err := w.c.Image.ImageStatus(w.ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: "busybox"}}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Version", "Version", "Version", "ImageStatus"}, w.f.Calls()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	w.f.ResetCalls()
	if got := w.f.Calls(); len(got) != 0 {
		t.Errorf("calls after reset = %v", got)
	}
}

func TestSandboxIPsAndNetwork(t *testing.T) {
	w := newWorld(t)
	a := w.sandbox(t, "a", false)
	w.sandbox(t, "host", true)
	w.sandbox(t, "b", false)
	var ips []string
	for _, s := range w.f.Sandboxes() {
		ips = append(ips, s.GetNetwork().GetIp())
	}
	if diff := cmp.Diff([]string{"10.88.0.2", "", "10.88.0.3"}, ips); diff != "" {
		t.Errorf("IPs of a, host, b (-want +got):\n%s", diff)
	}
	if err := w.f.SetSandboxNotReady(a); err != nil {
		t.Fatal(err)
	}
	st := w.f.Sandboxes()[0]
	if st.GetState() != runtimeapi.PodSandboxState_SANDBOX_NOTREADY || st.GetNetwork().GetIp() != "" {
		t.Errorf("dead sandbox = %s ip %q, want NOTREADY without IP", st.GetState(), st.GetNetwork().GetIp())
	}
	w.f.SetNetworkReady(false)
	_, err := w.c.Runtime.RunPodSandbox(w.ctx, &runtimeapi.RunPodSandboxRequest{Config: sandboxConfig("c", false)})
	if err == nil {
		t.Error("pod-network sandbox without a ready network succeeded")
	}
	w.sandbox(t, "host2", true) // host network needs no CNI
	bad := sandboxConfig("named", true)
	bad.Hostname = "named"
	if _, err := w.c.Runtime.RunPodSandbox(w.ctx, &runtimeapi.RunPodSandboxRequest{Config: bad}); err == nil {
		t.Error("host-network sandbox with a hostname succeeded, want runc's refusal")
	}
	if err := w.f.SetSandboxNotReady("nope"); err == nil {
		t.Error("SetSandboxNotReady of an unknown sandbox succeeded")
	}
}

func TestContainerTimesAndExits(t *testing.T) {
	w := newWorld(t)
	sb := w.sandbox(t, "p", false)
	w.clk.Step(time.Second)
	id := w.runningContainer(t, sb, "app")
	w.clk.Step(time.Second)
	if err := w.f.ExitContainer(id, 2, ""); err != nil {
		t.Fatal(err)
	}
	if err := w.f.ExitContainer(id, 1, ""); err == nil {
		t.Error("ExitContainer of an exited container succeeded")
	}
	got := w.f.Containers()[0]
	want := &runtimeapi.ContainerStatus{
		Id:         id,
		Metadata:   &runtimeapi.ContainerMetadata{Name: "app"},
		State:      runtimeapi.ContainerState_CONTAINER_EXITED,
		CreatedAt:  epoch.Add(time.Second).UnixNano(),
		StartedAt:  epoch.Add(time.Second).UnixNano(),
		FinishedAt: epoch.Add(2 * time.Second).UnixNano(),
		ExitCode:   2,
		Reason:     "Error",
		Image:      &runtimeapi.ImageSpec{Image: "docker.io/library/busybox:1.36"},
		ImageRef:   got.GetImageRef(),
		ImageId:    got.GetImageId(),
		LogPath:    "/var/log/pods/x/app/0.log",
		Resources:  &runtimeapi.ContainerResources{Linux: &runtimeapi.LinuxContainerResources{}},
	}
	if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}

	w.f.SetStopExitCode(0)
	graceful := w.runningContainer(t, sb, "graceful")
	if _, err := w.c.Runtime.StopContainer(w.ctx, &runtimeapi.StopContainerRequest{ContainerId: graceful, Timeout: 30}); err != nil {
		t.Fatal(err)
	}
	oom := w.runningContainer(t, sb, "oom")
	if err := w.f.ExitContainer(oom, 137, "OOMKilled"); err != nil {
		t.Fatal(err)
	}
	var summary []string
	for _, c := range w.f.Containers()[1:] {
		summary = append(summary, c.GetMetadata().GetName()+" "+c.GetState().String()+" "+c.GetReason())
	}
	if diff := cmp.Diff([]string{"graceful CONTAINER_EXITED Completed", "oom CONTAINER_EXITED OOMKilled"}, summary); diff != "" {
		t.Errorf("containers (-want +got):\n%s", diff)
	}
}

func TestImages(t *testing.T) {
	w := newWorld(t)
	status := func(ref string) *runtimeapi.Image {
		resp, err := w.c.Image.ImageStatus(w.ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: ref}})
		if err != nil {
			t.Fatalf("ImageStatus %q: %v", ref, err)
		}
		return resp.GetImage()
	}
	_, err := w.c.Image.PullImage(w.ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: "nginx:1.27"}})
	if !errors.Is(err, cri.ErrNotFound) {
		t.Errorf("pull of a ref not allowed: %v, want cri.ErrNotFound", err)
	}
	w.f.SetPullError(cri.StatusError(cri.ErrUnavailable, "registry down"))
	if _, err := w.c.Image.PullImage(w.ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: "nginx:1.27"}}); !errors.Is(err, cri.ErrUnavailable) {
		t.Errorf("pull with a set error: %v, want cri.ErrUnavailable", err)
	}
	w.f.AllowPull("nginx:1.27")
	resp, err := w.c.Image.PullImage(w.ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: "docker.io/library/nginx:1.27"}})
	if err != nil {
		t.Fatalf("pull of an allowed ref: %v", err)
	}
	img := status("nginx:1.27")
	if img == nil || img.GetId() != resp.GetImageRef() {
		t.Fatalf("pulled image status = %v, want ID %q", img, resp.GetImageRef())
	}
	if got := status(img.GetRepoDigests()[0]); got.GetId() != img.GetId() {
		t.Errorf("status by digest = %v", got)
	}
	if _, err := w.c.Image.RemoveImage(w.ctx, &runtimeapi.RemoveImageRequest{Image: &runtimeapi.ImageSpec{Image: "nginx:1.27"}}); err != nil {
		t.Fatal(err)
	}
	if status("nginx:1.27") != nil {
		t.Error("removed image still present")
	}
	if _, err := w.c.Image.RemoveImage(w.ctx, &runtimeapi.RemoveImageRequest{Image: &runtimeapi.ImageSpec{Image: "nginx:1.27"}}); err != nil {
		t.Errorf("removing an absent image: %v, want success", err)
	}
}

func TestNormalizeRef(t *testing.T) {
	tests := map[string]string{
		"busybox":                         "docker.io/library/busybox:latest",
		"busybox:1.36":                    "docker.io/library/busybox:1.36",
		"library/busybox:1.36":            "docker.io/library/busybox:1.36",
		"docker.io/busybox:1.36":          "docker.io/library/busybox:1.36",
		"index.docker.io/library/busybox": "docker.io/library/busybox:latest",
		"docker.io/library/busybox:1.36":  "docker.io/library/busybox:1.36",
		"user/app":                        "docker.io/user/app:latest",
		"registry.k8s.io/pause:3.10.1":    "registry.k8s.io/pause:3.10.1",
		"localhost/app":                   "localhost/app:latest",
		"localhost:5000/app:v1":           "localhost:5000/app:v1",
		"busybox@sha256:abc":              "docker.io/library/busybox@sha256:abc",
		"sha256:0123":                     "sha256:0123",
	}
	for in, want := range tests {
		if got := crifake.NormalizeRef(in); got != want {
			t.Errorf("NormalizeRef(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSetCgroupDriverRejectsUnknown(t *testing.T) {
	f := crifake.New(clocktesting.NewFakeClock(epoch))
	if err := f.SetCgroupDriver("openrc"); err == nil {
		t.Error("SetCgroupDriver(openrc) succeeded")
	}
}
