package kuberuntime

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"

	"github.com/berthk8s/berth/internal/pod/containerconfig"
	"github.com/berthk8s/berth/internal/pod/podplan"
)

// actuateResize is resize, timed as upstream's doPodResizeAction: from
// the check of a memory decrease to the last cgroup write, success
// meaning every step was done (Config.Observe.PodResize).
func (m *Manager) actuateResize(ctx context.Context, pod, from *corev1.Pod, r podplan.Resize, res *Result) error {
	start := m.cfg.Clock.Now()
	err := m.resize(ctx, pod, from, r, res)
	if m.cfg.Observe.PodResize != nil {
		m.cfg.Observe.PodResize(err == nil, m.cfg.Clock.Since(start))
	}
	return err
}

// resize performs the plan's in-place resize of a pod whose allocation is
// pod (its spec) and which last ran with from: the pod cgroup is widened
// to hold both (the larger of each value), the containers are updated to
// their allocation, then the pod cgroup is set to the allocation. So a
// container never asks for more than its pod cgroup allows, whichever way
// each value moves, and the pod never holds more than both for long.
// (Upstream orders the same steps per resource and per direction; one
// widening covers every case.) What was applied is recorded in res; the
// error is the first step that failed, after which nothing more is done:
// the next sync tries again from what is recorded.
func (m *Manager) resize(ctx context.Context, pod, from *corev1.Pod, r podplan.Resize, res *Result) error {
	if err := m.checkMemoryDecrease(ctx, pod, from, r.Containers); err != nil {
		return err
	}
	if r.PodCgroup && m.cfg.Cgroups != nil {
		if err := m.cfg.Cgroups.ResizePod(ctx, from, pod, true); err != nil {
			return err
		}
	}
	for _, c := range r.Containers {
		spec := containerAt(pod, c.Init, c.Index)
		if spec == nil || spec.Name != c.Name {
			continue
		}
		lr := containerconfig.ResizedResources(pod, spec, m.node, m.cpuset(pod, spec.Name), m.cpusetMems(pod, spec.Name))
		if _, err := m.cfg.Runtime.UpdateContainerResources(ctx, &runtimeapi.UpdateContainerResourcesRequest{ContainerId: c.ID, Linux: lr}); err != nil {
			return fmt.Errorf("update resources of container %q: %w", c.Name, err)
		}
		klog.FromContext(ctx).V(2).Info("Resized container", "container", c.Name, "containerID", c.ID)
		res.actuate(spec)
	}
	if r.PodCgroup && m.cfg.Cgroups != nil {
		if err := m.cfg.Cgroups.ResizePod(ctx, from, pod, false); err != nil {
			return err
		}
	}
	if r.PodCgroup {
		res.PodActuated = true
	}
	return nil
}

// checkMemoryDecrease is upstream's validateMemoryResizeAction for
// containers: a memory limit that is lowered (or set where there was
// none) must stay above what the container uses now, or the resize is
// refused before anything changes (the kernel would reclaim, or
// OOM-kill, to get there). The pod cgroup's own check is the container
// manager's (ResizePod).
func (m *Manager) checkMemoryDecrease(ctx context.Context, pod, from *corev1.Pod, cs []podplan.ResizeContainer) error {
	var errs []error
	for _, c := range cs {
		spec, was := containerAt(pod, c.Init, c.Index), containerAt(from, c.Init, c.Index)
		if spec == nil || was == nil || spec.Name != c.Name {
			continue
		}
		want := containerconfig.ResizedResources(pod, spec, m.node, "", "").GetMemoryLimitInBytes()
		have := containerconfig.ResizedResources(from, was, m.node, "", "").GetMemoryLimitInBytes()
		if want <= 0 || (have > 0 && want >= have) {
			continue
		}
		st, err := m.cfg.Runtime.ContainerStats(ctx, &runtimeapi.ContainerStatsRequest{ContainerId: c.ID})
		if err != nil {
			return fmt.Errorf("unable to read memory usage for pod %q: %w", klog.KObj(pod), err)
		}
		usage := st.GetStats().GetMemory().GetUsageBytes()
		if usage == nil {
			errs = append(errs, fmt.Errorf("missing container %q memory usage", c.Name))
		} else if usage.GetValue() >= uint64(want) {
			errs = append(errs, fmt.Errorf("attempting to set container %q memory limit (%d) below current usage (%d)", c.Name, want, usage.GetValue()))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("cannot decrease memory limits: %w", utilerrors.NewAggregate(errs))
	}
	return nil
}

// containerAt is the init or regular container at index i, nil if none.
func containerAt(pod *corev1.Pod, init bool, i int) *corev1.Container {
	cs := pod.Spec.Containers
	if init {
		cs = pod.Spec.InitContainers
	}
	if i < 0 || i >= len(cs) {
		return nil
	}
	return &cs[i]
}

func (m *Manager) cpuset(pod *corev1.Pod, name string) string {
	if m.cfg.Assigners.CPUs == nil {
		return ""
	}
	return m.cfg.Assigners.CPUs.CPUSet(string(pod.UID), name)
}

func (m *Manager) cpusetMems(pod *corev1.Pod, name string) string {
	if m.cfg.Assigners.Memory == nil {
		return ""
	}
	return m.cfg.Assigners.Memory.CPUSetMems(string(pod.UID), name)
}

// actuate records that the container now runs with its spec's resources.
func (r *Result) actuate(c *corev1.Container) {
	if r.Actuated == nil {
		r.Actuated = map[string]corev1.ResourceRequirements{}
	}
	r.Actuated[c.Name] = *c.Resources.DeepCopy()
}
