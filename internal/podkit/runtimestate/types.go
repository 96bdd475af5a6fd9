package runtimestate

import (
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
)

// SandboxState is the observed state of a pod sandbox.
type SandboxState int

const (
	// SandboxNotReady: the sandbox exists but is stopped or its network is gone.
	SandboxNotReady SandboxState = iota
	// SandboxReady: the sandbox runs and its network is set up.
	SandboxReady
)

func (s SandboxState) String() string {
	if s == SandboxReady {
		return "ready"
	}
	return "notready"
}

// ContainerState is the observed state of a container, as the CRI reports it.
type ContainerState int

const (
	ContainerUnknown ContainerState = iota
	ContainerCreated
	ContainerRunning
	ContainerExited
)

func (s ContainerState) String() string {
	switch s {
	case ContainerCreated:
		return "created"
	case ContainerRunning:
		return "running"
	case ContainerExited:
		return "exited"
	}
	return "unknown"
}

// Sandbox is one pod sandbox as observed in the runtime.
type Sandbox struct {
	ID        string
	State     SandboxState
	CreatedAt time.Time
	// Attempt is the sandbox metadata attempt: 0 for the first sandbox of a
	// pod, incremented each time berth re-creates it.
	Attempt uint32
	// IPs are the pod IPs, primary first. Empty for host-network pods.
	IPs []string
	// HostNetwork is true when the sandbox shares the node's network namespace.
	HostNetwork bool
}

// Container is one container as observed in the runtime.
type Container struct {
	ID        string
	Name      string
	SandboxID string
	State     ContainerState
	// Attempt is the container metadata attempt; RestartCount is the
	// io.kubernetes.container.restartCount annotation berth wrote at creation.
	Attempt      uint32
	RestartCount int
	// Hash is the io.kubernetes.container.hash annotation: the hash of the
	// v1.Container spec the container was created from.
	Hash uint64
	// Image is the image the pod asked for; ImageRef is the runtime's image
	// reference (digest) and ImageID the image ID as reported in status.
	Image    string
	ImageRef string
	ImageID  string

	CreatedAt  time.Time
	StartedAt  time.Time
	FinishedAt time.Time
	ExitCode   int32
	Reason     string
	Message    string
	// LogPath is the container's log file on the node (absolute).
	LogPath string
	// TerminationMessagePath and TerminationMessagePolicy are the values the
	// container was created with (from annotations), so a status can be
	// generated after the pod object is gone.
	TerminationMessagePath   string
	TerminationMessagePolicy string
	// Resources are the resources the runtime reports the container runs
	// with (CRI ContainerStatus.resources.linux); nil when it reports none,
	// and always nil in a listing (only a status carries them).
	Resources *ContainerResources
}

// ContainerResources are a container's CPU and memory settings as the
// runtime reports them, converted back to quantities (upstream's
// kubecontainer.ContainerResources less the memory request, which no
// runtime reports). A nil field is one the runtime did not report.
type ContainerResources struct {
	// CPURequest comes from cpu.shares, CPULimit from the CFS quota and
	// period, MemoryLimit from the memory limit in bytes.
	CPURequest, CPULimit, MemoryLimit *resource.Quantity
}

// Pod is every sandbox and container the runtime holds for one pod UID.
type Pod struct {
	UID       types.UID
	Name      string
	Namespace string
	// Sandboxes, newest first.
	Sandboxes []Sandbox
	// Containers of every sandbox, newest first (by CreatedAt, then Attempt).
	Containers []Container
}

// LatestSandbox returns the newest sandbox, or nil.
func (p *Pod) LatestSandbox() *Sandbox {
	if p == nil || len(p.Sandboxes) == 0 {
		return nil
	}
	return &p.Sandboxes[0]
}

// LatestContainer returns the newest container with the given name, or nil.
func (p *Pod) LatestContainer(name string) *Container {
	if p == nil {
		return nil
	}
	for i := range p.Containers {
		if p.Containers[i].Name == name {
			return &p.Containers[i]
		}
	}
	return nil
}

// ContainersNamed returns the containers with the given name, newest first.
func (p *Pod) ContainersNamed(name string) []*Container {
	if p == nil {
		return nil
	}
	var out []*Container
	for i := range p.Containers {
		if p.Containers[i].Name == name {
			out = append(out, &p.Containers[i])
		}
	}
	return out
}

// Running reports whether any sandbox is ready or any container is running or
// created: whether the pod still holds resources in the runtime.
func (p *Pod) Running() bool {
	if p == nil {
		return false
	}
	for _, s := range p.Sandboxes {
		if s.State == SandboxReady {
			return true
		}
	}
	for _, c := range p.Containers {
		if c.State == ContainerRunning || c.State == ContainerCreated || c.State == ContainerUnknown {
			return true
		}
	}
	return false
}

// StartFailure is why berth could not start a container in its last sync
// (ErrImagePull, ImagePullBackOff, ErrImageNeverPull, CrashLoopBackOff,
// CreateContainerConfigError, CreateContainerError, RunContainerError, ...).
// The pod status generator shows it as the container's waiting reason.
type StartFailure struct {
	Reason  string
	Message string
	// InProgress: the runtime refused because it was still serving an
	// earlier request for the container (a creation or start asked for
	// before berth restarted): the failure clears within seconds.
	InProgress bool
	// Waiting: the step waits on another part of the cluster (a claim
	// not bound yet) and the pod worker polls it: the syncs in a row it
	// stopped are not counted, so that polling does not rewrite the pod's
	// status.
	Waiting bool
}
