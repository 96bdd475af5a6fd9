package critest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/berthk8s/berth/internal/platform/cri"
)

// sleeper is a script that runs until it is killed.
const sleeper = "sleep 3600"

func (s *suite) testContainerLifecycle(t *testing.T) {
	ctx := testContext(t)
	rt := s.Client.Runtime
	sb := s.sandboxConfig(t, sandboxOpts{})
	sbID := s.runSandbox(t, ctx, sb)
	cfg := s.containerConfig(t, sb, "app", sleeper)
	id := s.createContainer(t, ctx, sbID, sb, cfg)

	st := s.containerStatus(t, ctx, id)
	if st.GetState() != runtimeapi.ContainerState_CONTAINER_CREATED || st.GetCreatedAt() <= 0 || st.GetStartedAt() != 0 {
		t.Errorf("created container: state %s createdAt %d startedAt %d, want CREATED, a creation time, not started", st.GetState(), st.GetCreatedAt(), st.GetStartedAt())
	}
	if st.GetMetadata().GetName() != "app" || st.GetLabels()["berth.test/container"] != "app" || st.GetAnnotations()["berth.test/annotation"] != "container" {
		t.Errorf("created container: metadata %v labels %v annotations %v", st.GetMetadata(), st.GetLabels(), st.GetAnnotations())
	}
	if want := filepath.Join(sb.GetLogDirectory(), "app", "0.log"); st.GetLogPath() != want {
		t.Errorf("LogPath = %q, want %q", st.GetLogPath(), want)
	}
	if st.GetImage().GetImage() != s.Image || st.GetImageRef() == "" {
		t.Errorf("image %q ref %q, want %q and a ref", st.GetImage().GetImage(), st.GetImageRef(), s.Image)
	}

	s.startContainer(t, ctx, id)
	st = s.containerStatus(t, ctx, id)
	if st.GetState() != runtimeapi.ContainerState_CONTAINER_RUNNING || st.GetStartedAt() < st.GetCreatedAt() {
		t.Errorf("started container: state %s createdAt %d startedAt %d, want RUNNING started after creation", st.GetState(), st.GetCreatedAt(), st.GetStartedAt())
	}
	if _, err := rt.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: id}); err == nil {
		t.Error("StartContainer of a running container succeeded, want an error")
	}

	// Timeout 0 kills at once; sh as PID 1 would ignore SIGTERM anyway.
	for range 2 { // stopping is idempotent
		if _, err := rt.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: 0}); err != nil {
			t.Fatalf("StopContainer: %v", err)
		}
	}
	st = s.containerStatus(t, ctx, id)
	if st.GetState() != runtimeapi.ContainerState_CONTAINER_EXITED || st.GetExitCode() != 137 || st.GetReason() != "Error" || st.GetFinishedAt() < st.GetStartedAt() {
		t.Errorf("stopped container: state %s exit %d reason %q finishedAt %d, want EXITED 137 Error finished after start",
			st.GetState(), st.GetExitCode(), st.GetReason(), st.GetFinishedAt())
	}
	if _, err := rt.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: id}); err == nil {
		t.Error("StartContainer of an exited container succeeded, want an error")
	}

	for range 2 { // so is removing
		if _, err := rt.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: id}); err != nil {
			t.Fatalf("RemoveContainer: %v", err)
		}
	}
	if _, err := rt.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id}); !errors.Is(err, cri.ErrNotFound) {
		t.Errorf("ContainerStatus of a removed container: %v, want cri.ErrNotFound", err)
	}
}

func (s *suite) testContainerListFilters(t *testing.T) {
	ctx := testContext(t)
	sb := s.sandboxConfig(t, sandboxOpts{})
	sbID := s.runSandbox(t, ctx, sb)
	created := s.createContainer(t, ctx, sbID, sb, s.containerConfig(t, sb, "created", sleeper))
	running := s.createContainer(t, ctx, sbID, sb, s.containerConfig(t, sb, "running", sleeper))
	s.startContainer(t, ctx, running)
	other := s.sandboxConfig(t, sandboxOpts{})
	otherID := s.runSandbox(t, ctx, other)
	elsewhere := s.createContainer(t, ctx, otherID, other, s.containerConfig(t, other, "elsewhere", sleeper))

	state := func(st runtimeapi.ContainerState) *runtimeapi.ContainerStateValue {
		return &runtimeapi.ContainerStateValue{State: st}
	}
	tests := []struct {
		name   string
		filter *runtimeapi.ContainerFilter
		want   []string
	}{
		{"by sandbox", &runtimeapi.ContainerFilter{PodSandboxId: sbID}, []string{created, running}},
		{"by id", &runtimeapi.ContainerFilter{Id: running}, []string{running}},
		{"by id prefix", &runtimeapi.ContainerFilter{Id: elsewhere[:12]}, []string{elsewhere}},
		{"by state", &runtimeapi.ContainerFilter{PodSandboxId: sbID, State: state(runtimeapi.ContainerState_CONTAINER_RUNNING)}, []string{running}},
		{"by label", &runtimeapi.ContainerFilter{LabelSelector: map[string]string{"berth.test/container": "elsewhere", "berth.test/pod": other.GetLabels()["berth.test/pod"]}}, []string{elsewhere}},
		{"label mismatch", &runtimeapi.ContainerFilter{PodSandboxId: sbID, LabelSelector: map[string]string{"berth.test/container": "elsewhere"}}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := s.Client.Runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: tc.filter})
			if err != nil {
				t.Fatalf("ListContainers: %v", err)
			}
			got := map[string]bool{}
			for _, c := range resp.GetContainers() {
				got[c.GetId()] = true
			}
			want := map[string]bool{}
			for _, id := range tc.want {
				want[id] = true
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("ListContainers (-want +got):\n%s", diff)
			}
		})
	}
	resp, err := s.Client.Runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{Id: running}})
	if err != nil || len(resp.GetContainers()) != 1 {
		t.Fatalf("ListContainers by id: %v, %d items", err, len(resp.GetContainers()))
	}
	c := resp.GetContainers()[0]
	if c.GetPodSandboxId() != sbID || c.GetMetadata().GetName() != "running" || c.GetState() != runtimeapi.ContainerState_CONTAINER_RUNNING ||
		c.GetCreatedAt() <= 0 || c.GetImageRef() == "" || c.GetLabels()["berth.test/container"] != "running" {
		t.Errorf("ListContainers item = %v, want sandbox, metadata, state, creation time, image ref and labels", c)
	}
}

// testContainerExits checks the status of containers whose process ends by
// itself.
func (s *suite) testContainerExits(t *testing.T) {
	tests := []struct {
		name   string
		code   int32
		reason string
	}{
		{"exit0", 0, "Completed"},
		{"exit3", 3, "Error"},
	}
	ctx := testContext(t)
	sb := s.sandboxConfig(t, sandboxOpts{})
	sbID := s.runSandbox(t, ctx, sb)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			script := fmt.Sprintf("exit %d", tc.code)
			id := s.createContainer(t, ctx, sbID, sb, s.containerConfig(t, sb, tc.name, script))
			s.startContainer(t, ctx, id)
			if s.Exit != nil {
				if err := s.Exit(id, tc.code); err != nil {
					t.Fatalf("make container exit: %v", err)
				}
			}
			st := s.waitExited(t, ctx, id)
			if st.GetExitCode() != tc.code || st.GetReason() != tc.reason {
				t.Errorf("exited container: code %d reason %q, want %d %q", st.GetExitCode(), st.GetReason(), tc.code, tc.reason)
			}
			// Both times are set, but containerd may report a process
			// that exits at once as finished before it started: it takes
			// StartedAt after the start call returns.
			if st.GetStartedAt() <= 0 || st.GetFinishedAt() <= 0 {
				t.Errorf("exited container: startedAt %d finishedAt %d, want both set", st.GetStartedAt(), st.GetFinishedAt())
			}
			// Stopping an exited container changes nothing.
			if _, err := s.Client.Runtime.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: 1}); err != nil {
				t.Fatalf("StopContainer of an exited container: %v", err)
			}
			if got := s.containerStatus(t, ctx, id).GetExitCode(); got != tc.code {
				t.Errorf("exit code after StopContainer = %d, want %d", got, tc.code)
			}
		})
	}
}

// testCreateContainerRefusals checks that containers need a present image
// and a ready sandbox.
func (s *suite) testCreateContainerRefusals(t *testing.T) {
	ctx := testContext(t)
	rt := s.Client.Runtime
	sb := s.sandboxConfig(t, sandboxOpts{})
	sbID := s.runSandbox(t, ctx, sb)

	cfg := s.containerConfig(t, sb, "noimage", sleeper)
	cfg.Image.Image = "docker.io/library/berth-absent-image:0"
	_, err := rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sbID, Config: cfg, SandboxConfig: sb})
	if !errors.Is(err, cri.ErrNotFound) {
		t.Errorf("CreateContainer with an absent image: %v, want cri.ErrNotFound", err)
	}
	_, err = rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: unknownID, Config: s.containerConfig(t, sb, "nosandbox", sleeper), SandboxConfig: sb})
	if !errors.Is(err, cri.ErrNotFound) {
		t.Errorf("CreateContainer in an unknown sandbox: %v, want cri.ErrNotFound", err)
	}

	created := s.createContainer(t, ctx, sbID, sb, s.containerConfig(t, sb, "beforestop", sleeper))
	if _, err := rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sbID}); err != nil {
		t.Fatalf("StopPodSandbox: %v", err)
	}
	_, err = rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sbID, Config: s.containerConfig(t, sb, "afterstop", sleeper), SandboxConfig: sb})
	if err == nil {
		t.Error("CreateContainer in a stopped sandbox succeeded, want an error")
	}
	if _, err := rt.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: created}); err == nil {
		t.Error("StartContainer in a stopped sandbox succeeded, want an error")
	}
}

// testDuplicateNames checks that a sandbox or a container cannot be created
// twice with the same metadata while the first exists.
func (s *suite) testDuplicateNames(t *testing.T) {
	ctx := testContext(t)
	rt := s.Client.Runtime
	sb := s.sandboxConfig(t, sandboxOpts{})
	sbID := s.runSandbox(t, ctx, sb)
	if resp, err := rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: sb}); err == nil {
		_, _ = rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: resp.GetPodSandboxId()})
		t.Error("RunPodSandbox with the metadata of an existing sandbox succeeded, want an error")
	}
	cfg := s.containerConfig(t, sb, "twice", sleeper)
	first := s.createContainer(t, ctx, sbID, sb, cfg)
	if _, err := rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sbID, Config: cfg, SandboxConfig: sb}); err == nil {
		t.Error("CreateContainer with the metadata of an existing container succeeded, want an error")
	}
	// Once the first is removed, the name is free; a new attempt is a new
	// name anyway.
	cfg.Metadata.Attempt = 1
	s.createContainer(t, ctx, sbID, sb, cfg)
	if _, err := rt.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: first}); err != nil {
		t.Fatalf("RemoveContainer: %v", err)
	}
	cfg.Metadata.Attempt = 0
	s.createContainer(t, ctx, sbID, sb, cfg)
}

// testUpdateResources checks that a running container's resources can be
// changed. (containerd 1.6 also accepts, and stores, resources for an exited
// container; the suite does not rely on either answer.)
func (s *suite) testUpdateResources(t *testing.T) {
	ctx := testContext(t)
	rt := s.Client.Runtime
	sb := s.sandboxConfig(t, sandboxOpts{})
	sbID := s.runSandbox(t, ctx, sb)
	id := s.createContainer(t, ctx, sbID, sb, s.containerConfig(t, sb, "resized", sleeper))
	s.startContainer(t, ctx, id)
	res := &runtimeapi.LinuxContainerResources{CpuShares: 512, MemoryLimitInBytes: 64 << 20}
	if _, err := rt.UpdateContainerResources(ctx, &runtimeapi.UpdateContainerResourcesRequest{ContainerId: id, Linux: res}); err != nil {
		t.Fatalf("UpdateContainerResources: %v", err)
	}
	_, err := rt.UpdateContainerResources(ctx, &runtimeapi.UpdateContainerResourcesRequest{ContainerId: unknownID, Linux: res})
	if !errors.Is(err, cri.ErrNotFound) {
		t.Errorf("UpdateContainerResources of an unknown container: %v, want cri.ErrNotFound", err)
	}
}

// testRemoveSandboxRemovesContainers checks that stopping a sandbox kills
// its containers and removing it removes them.
func (s *suite) testRemoveSandboxRemovesContainers(t *testing.T) {
	ctx := testContext(t)
	rt := s.Client.Runtime
	sb := s.sandboxConfig(t, sandboxOpts{})
	sbID := s.runSandbox(t, ctx, sb)
	killed := s.createContainer(t, ctx, sbID, sb, s.containerConfig(t, sb, "killed", sleeper))
	s.startContainer(t, ctx, killed)
	if _, err := rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sbID}); err != nil {
		t.Fatalf("StopPodSandbox: %v", err)
	}
	if st := s.containerStatus(t, ctx, killed); st.GetState() != runtimeapi.ContainerState_CONTAINER_EXITED || st.GetExitCode() != 137 {
		t.Errorf("container of a stopped sandbox: state %s exit %d, want EXITED 137", st.GetState(), st.GetExitCode())
	}

	sb2 := s.sandboxConfig(t, sandboxOpts{})
	sb2ID := s.runSandbox(t, ctx, sb2)
	running := s.createContainer(t, ctx, sb2ID, sb2, s.containerConfig(t, sb2, "running", sleeper))
	s.startContainer(t, ctx, running)
	for _, id := range []string{sbID, sb2ID} {
		if _, err := rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: id}); err != nil {
			t.Fatalf("RemovePodSandbox %s: %v", id, err)
		}
	}
	for _, id := range []string{killed, running} {
		if _, err := rt.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id}); !errors.Is(err, cri.ErrNotFound) {
			t.Errorf("ContainerStatus of a container of a removed sandbox: %v, want cri.ErrNotFound", err)
		}
	}
}

// testReopenContainerLog checks what the kubelet's log rotation relies on:
// a running container's log file exists, and after it is renamed away
// ReopenContainerLog makes a new one at the same path; a container that is
// not running cannot reopen its log.
func (s *suite) testReopenContainerLog(t *testing.T) {
	ctx := testContext(t)
	rt := s.Client.Runtime
	sb := s.sandboxConfig(t, sandboxOpts{})
	sbID := s.runSandbox(t, ctx, sb)
	id := s.createContainer(t, ctx, sbID, sb, s.containerConfig(t, sb, "app", sleeper))
	s.startContainer(t, ctx, id)
	path := s.containerStatus(t, ctx, id).GetLogPath()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("log of a running container: %v", err)
	}
	if err := os.Rename(path, path+".rotated"); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.ReopenContainerLog(ctx, &runtimeapi.ReopenContainerLogRequest{ContainerId: id}); err != nil {
		t.Fatalf("ReopenContainerLog: %v", err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("log after ReopenContainerLog: %v", err)
	}
	if _, err := rt.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: 0}); err != nil {
		t.Fatalf("StopContainer: %v", err)
	}
	if _, err := rt.ReopenContainerLog(ctx, &runtimeapi.ReopenContainerLogRequest{ContainerId: id}); err == nil {
		t.Error("ReopenContainerLog of an exited container succeeded, want an error")
	}
}
