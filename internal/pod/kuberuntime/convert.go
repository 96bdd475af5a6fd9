package kuberuntime

import (
	"cmp"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	kubelettypes "k8s.io/kubelet/pkg/types"

	"github.com/berthk8s/berth/internal/pod/containerconfig"
	"github.com/berthk8s/berth/internal/podkit/cgroupmath"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// unixNanos converts a CRI timestamp; 0 is the zero time.
func unixNanos(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

func toSandboxState(s runtimeapi.PodSandboxState) runtimestate.SandboxState {
	if s == runtimeapi.PodSandboxState_SANDBOX_READY {
		return runtimestate.SandboxReady
	}
	return runtimestate.SandboxNotReady
}

func toContainerState(s runtimeapi.ContainerState) runtimestate.ContainerState {
	switch s {
	case runtimeapi.ContainerState_CONTAINER_CREATED:
		return runtimestate.ContainerCreated
	case runtimeapi.ContainerState_CONTAINER_RUNNING:
		return runtimestate.ContainerRunning
	case runtimeapi.ContainerState_CONTAINER_EXITED:
		return runtimestate.ContainerExited
	}
	return runtimestate.ContainerUnknown
}

// userImage is the image as the pod named it, when the runtime kept it.
func userImage(spec *runtimeapi.ImageSpec) string {
	if u := spec.GetUserSpecifiedImage(); u != "" {
		return u
	}
	return spec.GetImage()
}

// sandboxFromList converts a listed sandbox.
func sandboxFromList(s *runtimeapi.PodSandbox) runtimestate.Sandbox {
	return runtimestate.Sandbox{
		ID:        s.GetId(),
		State:     toSandboxState(s.GetState()),
		CreatedAt: unixNanos(s.GetCreatedAt()),
		Attempt:   s.GetMetadata().GetAttempt(),
	}
}

// criContainer is what a listed container (runtimeapi.Container) and a
// container status (runtimeapi.ContainerStatus) both carry.
type criContainer interface {
	GetId() string
	GetLabels() map[string]string
	GetAnnotations() map[string]string
	GetMetadata() *runtimeapi.ContainerMetadata
	GetState() runtimeapi.ContainerState
	GetImage() *runtimeapi.ImageSpec
	GetImageRef() string
	GetImageId() string
	GetCreatedAt() int64
}

// containerCommon converts what listings and statuses have in common: the
// one place that reads berth's labels and annotations back.
func containerCommon(c criContainer) runtimestate.Container {
	info := containerconfig.ReadAnnotations(c.GetAnnotations())
	imageID := c.GetImageId()
	if imageID == "" {
		imageID = c.GetImageRef()
	}
	return runtimestate.Container{
		ID:                       c.GetId(),
		Name:                     containerName(c.GetLabels(), c.GetMetadata()),
		State:                    toContainerState(c.GetState()),
		Attempt:                  c.GetMetadata().GetAttempt(),
		RestartCount:             info.RestartCount,
		Hash:                     info.Hash,
		Image:                    userImage(c.GetImage()),
		ImageRef:                 c.GetImageRef(),
		ImageID:                  imageID,
		CreatedAt:                unixNanos(c.GetCreatedAt()),
		TerminationMessagePath:   info.TerminationMessagePath,
		TerminationMessagePolicy: info.TerminationMessagePolicy,
	}
}

// containerFromList converts a listed container: what a listing carries
// (no start/finish times, exit code or log path).
func containerFromList(c *runtimeapi.Container) runtimestate.Container {
	out := containerCommon(c)
	out.SandboxID = c.GetPodSandboxId()
	return out
}

// containerResources converts the resources a container status reports,
// as upstream's toKubeContainerResources: the CPU limit from a positive
// period's quota, the CPU request from the shares, the memory limit from
// its bytes, each only when it comes out positive; nil when none does.
func containerResources(r *runtimeapi.ContainerResources) *runtimestate.ContainerResources {
	linux := r.GetLinux()
	if linux == nil {
		return nil
	}
	var out runtimestate.ContainerResources
	if linux.GetCpuPeriod() > 0 {
		if milli := cgroupmath.QuotaToMilliCPU(linux.GetCpuQuota(), linux.GetCpuPeriod()); milli > 0 {
			out.CPULimit = resource.NewMilliQuantity(milli, resource.DecimalSI)
		}
	}
	if linux.GetCpuShares() > 0 {
		if milli := cgroupmath.SharesToMilliCPU(linux.GetCpuShares()); milli > 0 {
			out.CPURequest = resource.NewMilliQuantity(milli, resource.DecimalSI)
		}
	}
	if linux.GetMemoryLimitInBytes() > 0 {
		out.MemoryLimit = resource.NewQuantity(linux.GetMemoryLimitInBytes(), resource.BinarySI)
	}
	if out.CPULimit == nil && out.CPURequest == nil && out.MemoryLimit == nil {
		return nil
	}
	return &out
}

// containerName prefers the container name label over the metadata name.
func containerName(labels map[string]string, md *runtimeapi.ContainerMetadata) string {
	if n := labels[kubelettypes.KubernetesContainerNameLabel]; n != "" {
		return n
	}
	return md.GetName()
}

// podFor returns the pod entry for labels in pods, creating it.
func podFor(pods map[types.UID]*runtimestate.Pod, labels map[string]string) *runtimestate.Pod {
	uid := types.UID(labels[kubelettypes.KubernetesPodUIDLabel])
	p := pods[uid]
	if p == nil {
		p = &runtimestate.Pod{UID: uid}
		pods[uid] = p
	}
	if p.Name == "" {
		p.Name = labels[kubelettypes.KubernetesPodNameLabel]
		p.Namespace = labels[kubelettypes.KubernetesPodNamespaceLabel]
	}
	return p
}

// sortPod orders sandboxes and containers newest first (by creation time,
// then attempt), as runtimestate documents.
func sortPod(p *runtimestate.Pod) {
	slices.SortStableFunc(p.Sandboxes, func(a, b runtimestate.Sandbox) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), cmp.Compare(b.Attempt, a.Attempt))
	})
	slices.SortStableFunc(p.Containers, func(a, b runtimestate.Container) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), cmp.Compare(b.Attempt, a.Attempt))
	})
}
