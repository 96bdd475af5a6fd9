package crifake

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// sandbox is one pod sandbox. Guarded by Fake.mu.
type sandbox struct {
	id        string
	seq       uint64
	config    *runtimeapi.PodSandboxConfig
	handler   string
	state     runtimeapi.PodSandboxState
	createdAt int64
	// ip is the pod IP while the sandbox is ready; empty for host network.
	ip string
}

func (s *sandbox) hostNetwork() bool {
	return s.config.GetLinux().GetSecurityContext().GetNamespaceOptions().GetNetwork() == runtimeapi.NamespaceMode_NODE
}

// name is the name containerd reserves for a sandbox: two sandboxes with the
// same metadata cannot coexist.
func sandboxName(md *runtimeapi.PodSandboxMetadata) string {
	return fmt.Sprintf("%s_%s_%s_%d", md.GetName(), md.GetNamespace(), md.GetUid(), md.GetAttempt())
}

// RunPodSandbox creates a READY sandbox. Like containerd it needs metadata,
// refuses a second sandbox with the same metadata, and cannot set up a pod
// network while the network is not ready.
func (f *Fake) RunPodSandbox(_ context.Context, req *runtimeapi.RunPodSandboxRequest) (*runtimeapi.RunPodSandboxResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	cfg := req.GetConfig()
	md := cfg.GetMetadata()
	if md == nil {
		return nil, errors.New("sandbox config must include metadata")
	}
	name := sandboxName(md)
	for _, s := range f.world.sandboxes {
		if sandboxName(s.config.GetMetadata()) == name {
			return nil, fmt.Errorf("failed to reserve sandbox name %q: name %q is reserved for %q", name, name, s.id)
		}
	}
	s := &sandbox{
		config:    proto.Clone(cfg).(*runtimeapi.PodSandboxConfig),
		handler:   req.GetRuntimeHandler(),
		state:     runtimeapi.PodSandboxState_SANDBOX_READY,
		createdAt: f.now(),
	}
	if s.hostNetwork() && cfg.GetHostname() != "" {
		// runc refuses: the sandbox shares the node's UTS namespace.
		return nil, fmt.Errorf("failed to create containerd task: OCI runtime create failed: unable to set hostname without a private UTS namespace")
	}
	if !s.hostNetwork() {
		if !f.knobs.networkReady {
			return nil, fmt.Errorf("failed to setup network for sandbox %q: cni plugin not initialized", name)
		}
		s.ip = f.nextIP()
	}
	s.id, s.seq = f.newID("sandbox")
	f.world.sandboxes[s.id] = s
	f.emit(s.id, s.id, runtimeapi.ContainerEventType_CONTAINER_CREATED_EVENT)
	f.emit(s.id, s.id, runtimeapi.ContainerEventType_CONTAINER_STARTED_EVENT)
	return &runtimeapi.RunPodSandboxResponse{PodSandboxId: s.id}, nil
}

// StopPodSandbox kills the sandbox's running containers and makes it
// NOTREADY, releasing its IP. Stopping a stopped sandbox is a no-op.
func (f *Fake) StopPodSandbox(_ context.Context, req *runtimeapi.StopPodSandboxRequest) (*runtimeapi.StopPodSandboxResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, err := f.findSandbox(req.GetPodSandboxId())
	if err != nil {
		return nil, err
	}
	f.stopSandbox(s)
	return &runtimeapi.StopPodSandboxResponse{}, nil
}

// stopSandbox kills the sandbox's running containers and makes it NOTREADY.
// Callers hold mu.
func (f *Fake) stopSandbox(s *sandbox) {
	for _, c := range f.world.containers {
		if c.sandboxID == s.id {
			f.kill(c, 137)
		}
	}
	if s.state == runtimeapi.PodSandboxState_SANDBOX_NOTREADY {
		return
	}
	s.state = runtimeapi.PodSandboxState_SANDBOX_NOTREADY
	s.ip = ""
	f.emit(s.id, s.id, runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT)
}

// RemovePodSandbox force-stops the sandbox, removes its containers and
// forgets it. Removing an unknown sandbox succeeds, as in containerd.
func (f *Fake) RemovePodSandbox(_ context.Context, req *runtimeapi.RemovePodSandboxRequest) (*runtimeapi.RemovePodSandboxResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, err := f.findSandbox(req.GetPodSandboxId())
	if err != nil {
		if isNotFound(err) {
			return &runtimeapi.RemovePodSandboxResponse{}, nil
		}
		return nil, err
	}
	f.stopSandbox(s)
	for id, c := range f.world.containers {
		if c.sandboxID == s.id {
			delete(f.world.containers, id)
			f.emit(s.id, id, runtimeapi.ContainerEventType_CONTAINER_DELETED_EVENT)
		}
	}
	// containerd 2 sends the sandbox's last status with its DELETED event.
	f.emit(s.id, s.id, runtimeapi.ContainerEventType_CONTAINER_DELETED_EVENT)
	delete(f.world.sandboxes, s.id)
	return &runtimeapi.RemovePodSandboxResponse{}, nil
}

// PodSandboxStatus reports one sandbox.
func (f *Fake) PodSandboxStatus(_ context.Context, req *runtimeapi.PodSandboxStatusRequest) (*runtimeapi.PodSandboxStatusResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, err := f.findSandbox(req.GetPodSandboxId())
	if err != nil {
		return nil, err
	}
	return &runtimeapi.PodSandboxStatusResponse{Status: s.status()}, nil
}

func (s *sandbox) status() *runtimeapi.PodSandboxStatus {
	st := &runtimeapi.PodSandboxStatus{
		Id:        s.id,
		Metadata:  proto.Clone(s.config.GetMetadata()).(*runtimeapi.PodSandboxMetadata),
		State:     s.state,
		CreatedAt: s.createdAt,
		Network:   &runtimeapi.PodSandboxNetworkStatus{Ip: s.ip},
		Linux: &runtimeapi.LinuxPodSandboxStatus{Namespaces: &runtimeapi.Namespace{
			Options: cloneNamespaceOptions(s.config.GetLinux().GetSecurityContext().GetNamespaceOptions()),
		}},
		Labels:         copyMap(s.config.GetLabels()),
		Annotations:    copyMap(s.config.GetAnnotations()),
		RuntimeHandler: s.handler,
	}
	return st
}

func cloneNamespaceOptions(o *runtimeapi.NamespaceOption) *runtimeapi.NamespaceOption {
	if o == nil {
		return &runtimeapi.NamespaceOption{}
	}
	return proto.Clone(o).(*runtimeapi.NamespaceOption)
}

// ListPodSandbox lists sandboxes matching the filter, oldest first.
func (f *Fake) ListPodSandbox(_ context.Context, req *runtimeapi.ListPodSandboxRequest) (*runtimeapi.ListPodSandboxResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var items []*runtimeapi.PodSandbox
	for _, s := range f.sortedSandboxes() {
		if !f.sandboxMatches(s, req.GetFilter()) {
			continue
		}
		items = append(items, &runtimeapi.PodSandbox{
			Id:             s.id,
			Metadata:       proto.Clone(s.config.GetMetadata()).(*runtimeapi.PodSandboxMetadata),
			State:          s.state,
			CreatedAt:      s.createdAt,
			Labels:         copyMap(s.config.GetLabels()),
			Annotations:    copyMap(s.config.GetAnnotations()),
			RuntimeHandler: s.handler,
		})
	}
	return &runtimeapi.ListPodSandboxResponse{Items: items}, nil
}

// findSandbox resolves a full ID or a unique ID prefix, as containerd does.
// Callers hold mu.
func (f *Fake) findSandbox(id string) (*sandbox, error) {
	full, err := resolveID(id, f.world.sandboxes, "sandbox")
	if err != nil {
		return nil, err
	}
	return f.world.sandboxes[full], nil
}
