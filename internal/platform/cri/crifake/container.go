package crifake

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// container is one container. Guarded by Fake.mu.
type container struct {
	id        string
	seq       uint64
	sandboxID string
	config    *runtimeapi.ContainerConfig
	// imageID is the image's ID, imageName its first tag and imageRef its
	// repo digest, as containerd reports them in ContainerStatus.
	imageID, imageName, imageRef string
	logPath                      string
	resources                    *runtimeapi.ContainerResources
	// memoryUsage is what ContainerStats reports (SetMemoryUsage).
	memoryUsage uint64

	state                            runtimeapi.ContainerState
	createdAt, startedAt, finishedAt int64
	exitCode                         int32
	reason, message                  string
}

func containerName(sandboxMD *runtimeapi.PodSandboxMetadata, md *runtimeapi.ContainerMetadata) string {
	return fmt.Sprintf("%s_%s_%s_%s_%d", md.GetName(), sandboxMD.GetName(), sandboxMD.GetNamespace(), sandboxMD.GetUid(), md.GetAttempt())
}

// CreateContainer creates a container in a READY sandbox from a present
// image. Two containers with the same metadata in one sandbox cannot
// coexist.
func (f *Fake) CreateContainer(_ context.Context, req *runtimeapi.CreateContainerRequest) (*runtimeapi.CreateContainerResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, err := f.findSandbox(req.GetPodSandboxId())
	if err != nil {
		return nil, fmt.Errorf("failed to find sandbox id %q: %w", req.GetPodSandboxId(), err)
	}
	cfg := req.GetConfig()
	if cfg.GetMetadata() == nil {
		return nil, errors.New("container config must include metadata")
	}
	if s.state != runtimeapi.PodSandboxState_SANDBOX_READY {
		// containerd 1.6 answers NotFound: the sandbox's task is gone.
		return nil, notFoundError{msg: fmt.Sprintf("failed to get sandbox container task: no running task found: task %s not found: not found", s.id)}
	}
	name := containerName(s.config.GetMetadata(), cfg.GetMetadata())
	for _, c := range f.world.containers {
		if c.sandboxID == s.id && containerName(s.config.GetMetadata(), c.config.GetMetadata()) == name {
			return nil, fmt.Errorf("failed to reserve container name %q: name %q is reserved for %q", name, name, c.id)
		}
	}
	img := f.findImage(cfg.GetImage().GetImage())
	if img == nil {
		return nil, notFoundError{msg: fmt.Sprintf("failed to resolve image %q: not found", cfg.GetImage().GetImage())}
	}
	c := &container{
		sandboxID: s.id,
		config:    proto.Clone(cfg).(*runtimeapi.ContainerConfig),
		imageID:   img.id,
		imageName: img.repoTags[0],
		imageRef:  img.repoDigests[0],
		state:     runtimeapi.ContainerState_CONTAINER_CREATED,
		createdAt: f.now(),
	}
	if dir := req.GetSandboxConfig().GetLogDirectory(); dir != "" && cfg.GetLogPath() != "" {
		c.logPath = filepath.Join(dir, cfg.GetLogPath())
	}
	// containerd reports (possibly empty) Linux resources for every container.
	c.resources = &runtimeapi.ContainerResources{Linux: &runtimeapi.LinuxContainerResources{}}
	if r := cfg.GetLinux().GetResources(); r != nil {
		c.resources.Linux = proto.Clone(r).(*runtimeapi.LinuxContainerResources)
	}
	c.id, c.seq = f.newID("container")
	f.world.containers[c.id] = c
	f.emit(c.sandboxID, c.id, runtimeapi.ContainerEventType_CONTAINER_CREATED_EVENT)
	return &runtimeapi.CreateContainerResponse{ContainerId: c.id}, nil
}

// StartContainer runs a CREATED container of a READY sandbox.
func (f *Fake) StartContainer(_ context.Context, req *runtimeapi.StartContainerRequest) (*runtimeapi.StartContainerResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, err := f.findContainer(req.GetContainerId())
	if err != nil {
		return nil, err
	}
	if c.state != runtimeapi.ContainerState_CONTAINER_CREATED {
		return nil, fmt.Errorf("failed to set starting state for container %q: container is in %s state", c.id, c.state)
	}
	if s := f.world.sandboxes[c.sandboxID]; s == nil || s.state != runtimeapi.PodSandboxState_SANDBOX_READY {
		return nil, fmt.Errorf("sandbox container %q is not running", c.sandboxID)
	}
	c.state = runtimeapi.ContainerState_CONTAINER_RUNNING
	c.startedAt = f.now()
	_ = c.touchLog() // no directory: no log, the fake does not fail for it
	f.emit(c.sandboxID, c.id, runtimeapi.ContainerEventType_CONTAINER_STARTED_EVENT)
	return &runtimeapi.StartContainerResponse{}, nil
}

// touchLog creates the container's log file, empty, when its directory
// exists, as containerd opens it when the container starts or its log is
// reopened. Callers hold mu.
func (c *container) touchLog() error {
	if c.logPath == "" {
		return nil
	}
	if _, err := os.Stat(filepath.Dir(c.logPath)); err != nil {
		return fmt.Errorf("open container log %q: %w", c.logPath, err)
	}
	fl, err := os.OpenFile(c.logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o640)
	if err != nil {
		return fmt.Errorf("open container log %q: %w", c.logPath, err)
	}
	return fl.Close()
}

// StopContainer stops a RUNNING container, which exits with the configured
// stop exit code (137 by default: the grace period is only logical). A
// container that is not running is left as it is, as containerd does.
func (f *Fake) StopContainer(_ context.Context, req *runtimeapi.StopContainerRequest) (*runtimeapi.StopContainerResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, err := f.findContainer(req.GetContainerId())
	if err != nil {
		return nil, err
	}
	f.kill(c, f.knobs.stopExitCode)
	return &runtimeapi.StopContainerResponse{}, nil
}

// kill makes a running container exit with code. Callers hold mu.
func (f *Fake) kill(c *container, code int32) {
	if c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return
	}
	f.exit(c, code, "", "")
}

// exit records that a running container's process ended. Callers hold mu.
func (f *Fake) exit(c *container, code int32, reason, message string) {
	if reason == "" {
		reason = "Error"
		if code == 0 {
			reason = "Completed"
		}
	}
	c.state = runtimeapi.ContainerState_CONTAINER_EXITED
	c.finishedAt = f.now()
	c.exitCode, c.reason, c.message = code, reason, message
	f.emit(c.sandboxID, c.id, runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT)
}

// RemoveContainer removes a container, killing it first if it runs.
// Removing an unknown container succeeds, as in containerd.
func (f *Fake) RemoveContainer(_ context.Context, req *runtimeapi.RemoveContainerRequest) (*runtimeapi.RemoveContainerResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, err := f.findContainer(req.GetContainerId())
	if err != nil {
		if isNotFound(err) {
			return &runtimeapi.RemoveContainerResponse{}, nil
		}
		return nil, err
	}
	delete(f.world.containers, c.id)
	f.emit(c.sandboxID, c.id, runtimeapi.ContainerEventType_CONTAINER_DELETED_EVENT)
	return &runtimeapi.RemoveContainerResponse{}, nil
}

// ListContainers lists containers matching the filter, oldest first.
func (f *Fake) ListContainers(_ context.Context, req *runtimeapi.ListContainersRequest) (*runtimeapi.ListContainersResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*runtimeapi.Container
	for _, c := range f.sortedContainers() {
		if !f.containerMatches(c, req.GetFilter()) {
			continue
		}
		out = append(out, &runtimeapi.Container{
			Id:           c.id,
			PodSandboxId: c.sandboxID,
			Metadata:     proto.Clone(c.config.GetMetadata()).(*runtimeapi.ContainerMetadata),
			Image:        proto.Clone(c.config.GetImage()).(*runtimeapi.ImageSpec),
			ImageRef:     c.imageID,
			ImageId:      c.imageID,
			State:        c.state,
			CreatedAt:    c.createdAt,
			Labels:       copyMap(c.config.GetLabels()),
			Annotations:  copyMap(c.config.GetAnnotations()),
		})
	}
	return &runtimeapi.ListContainersResponse{Containers: out}, nil
}

// ContainerStatus reports one container.
func (f *Fake) ContainerStatus(_ context.Context, req *runtimeapi.ContainerStatusRequest) (*runtimeapi.ContainerStatusResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, err := f.findContainer(req.GetContainerId())
	if err != nil {
		return nil, err
	}
	return &runtimeapi.ContainerStatusResponse{Status: c.status()}, nil
}

func (c *container) status() *runtimeapi.ContainerStatus {
	st := &runtimeapi.ContainerStatus{
		Id:          c.id,
		Metadata:    proto.Clone(c.config.GetMetadata()).(*runtimeapi.ContainerMetadata),
		State:       c.state,
		CreatedAt:   c.createdAt,
		StartedAt:   c.startedAt,
		FinishedAt:  c.finishedAt,
		ExitCode:    c.exitCode,
		Image:       &runtimeapi.ImageSpec{Image: c.imageName},
		ImageRef:    c.imageRef,
		ImageId:     c.imageID,
		Reason:      c.reason,
		Message:     c.message,
		Labels:      copyMap(c.config.GetLabels()),
		Annotations: copyMap(c.config.GetAnnotations()),
		LogPath:     c.logPath,
	}
	for _, m := range c.config.GetMounts() {
		st.Mounts = append(st.Mounts, proto.Clone(m).(*runtimeapi.Mount))
	}
	st.Resources = proto.Clone(c.resources).(*runtimeapi.ContainerResources)
	return st
}

// UpdateContainerResources replaces the Linux resources of a container. Like
// containerd 1.6 it accepts exited containers too.
func (f *Fake) UpdateContainerResources(_ context.Context, req *runtimeapi.UpdateContainerResourcesRequest) (*runtimeapi.UpdateContainerResourcesResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, err := f.findContainer(req.GetContainerId())
	if err != nil {
		return nil, err
	}
	if req.GetLinux() != nil {
		c.resources = &runtimeapi.ContainerResources{Linux: proto.Clone(req.GetLinux()).(*runtimeapi.LinuxContainerResources)}
	}
	return &runtimeapi.UpdateContainerResourcesResponse{}, nil
}

// ContainerStats reports a container's memory usage (SetMemoryUsage; 0
// until set) at the fake's clock.
func (f *Fake) ContainerStats(_ context.Context, req *runtimeapi.ContainerStatsRequest) (*runtimeapi.ContainerStatsResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, err := f.findContainer(req.GetContainerId())
	if err != nil {
		return nil, err
	}
	return &runtimeapi.ContainerStatsResponse{Stats: &runtimeapi.ContainerStats{
		Attributes: &runtimeapi.ContainerAttributes{Id: c.id, Metadata: proto.Clone(c.config.GetMetadata()).(*runtimeapi.ContainerMetadata)},
		Memory:     &runtimeapi.MemoryUsage{Timestamp: f.now(), UsageBytes: &runtimeapi.UInt64Value{Value: c.memoryUsage}},
	}}, nil
}

// SetMemoryUsage sets the memory usage ContainerStats reports for a
// container.
func (f *Fake) SetMemoryUsage(id string, bytes uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, err := f.findContainer(id)
	if err != nil {
		return err
	}
	c.memoryUsage = bytes
	return nil
}

// findContainer resolves a full ID or a unique ID prefix. Callers hold mu.
func (f *Fake) findContainer(id string) (*container, error) {
	full, err := resolveID(id, f.world.containers, "container")
	if err != nil {
		return nil, err
	}
	return f.world.containers[full], nil
}

// ReopenContainerLog makes a running container write to a new file at its
// log path, as containerd does after the kubelet renamed the old one: the
// fake writes no logs, so it creates the file (in a directory that must
// exist) and leaves it empty. A container not running is an error, with
// containerd's message.
func (f *Fake) ReopenContainerLog(_ context.Context, req *runtimeapi.ReopenContainerLogRequest) (*runtimeapi.ReopenContainerLogResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, err := f.findContainer(req.GetContainerId())
	if err != nil {
		return nil, err
	}
	if c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return nil, errors.New("container is not running")
	}
	if err := c.touchLog(); err != nil {
		return nil, err
	}
	return &runtimeapi.ReopenContainerLogResponse{}, nil
}
