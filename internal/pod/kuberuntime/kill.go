package kuberuntime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	v1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"

	"github.com/berthk8s/berth/internal/platform/cri"
	"github.com/berthk8s/berth/internal/pod/containerconfig"
	"github.com/berthk8s/berth/internal/pod/podplan"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// minimumGracePeriodInSeconds is the shortest stop timeout a container
// gets, to avoid needless SIGKILLs (upstream's constant).
const minimumGracePeriodInSeconds = 2

// killGrace is the grace period of a container kill before its preStop
// hook and its turn in the termination order eat into it (upstream
// setTerminationGracePeriod, then the override): the override when given,
// else the pod's deletion grace period, else the failed probe's
// terminationGracePeriodSeconds when the kill is for a liveness or startup
// failure, else the pod's termination grace period, else the one annotated
// on the container (pod unknown), else 2 s.
func killGrace(pod *corev1.Pod, spec *corev1.Container, reason string, annotated, override *int64) int64 {
	switch {
	case override != nil:
		return *override
	case pod == nil:
		if annotated != nil {
			return *annotated
		}
	case pod.DeletionGracePeriodSeconds != nil:
		return *pod.DeletionGracePeriodSeconds
	case probeGrace(spec, reason) != nil:
		return *probeGrace(spec, reason)
	case pod.Spec.TerminationGracePeriodSeconds != nil:
		return *pod.Spec.TerminationGracePeriodSeconds
	}
	return minimumGracePeriodInSeconds
}

// probeGrace is the probe-level terminationGracePeriodSeconds of the probe
// a kill reason names, or nil.
func probeGrace(spec *corev1.Container, reason string) *int64 {
	if spec == nil {
		return nil
	}
	var p *corev1.Probe
	switch reason {
	case podplan.KillReasonLivenessProbe:
		p = spec.LivenessProbe
	case podplan.KillReasonStartupProbe:
		p = spec.StartupProbe
	}
	if p == nil {
		return nil
	}
	return p.TerminationGracePeriodSeconds
}

// stopTimeout is what is left of grace after the preStop hook and the wait
// for the container's turn took their (whole) seconds, never under 2 s.
func stopTimeout(grace, hookSeconds, waitSeconds int64) int64 {
	return max(grace-hookSeconds-waitSeconds, minimumGracePeriodInSeconds)
}

// eventPod is the pod events are recorded against: the pod itself, or one
// rebuilt from the runtime's labels for a pod berth no longer knows.
func eventPod(pod *corev1.Pod, rt *runtimestate.Pod) *corev1.Pod {
	if pod != nil {
		return pod
	}
	return &corev1.Pod{ObjectMeta: v1.ObjectMeta{Name: rt.Name, Namespace: rt.Namespace, UID: rt.UID}}
}

// KillPod stops every container of the pod that is not exited, then
// stops every sandbox. pod may be nil (a pod found only in the runtime);
// gracePeriod overrides the pod's grace period when set. Containers stop in
// parallel, each running its preStop hook first when the pod is known;
// when the pod has sidecars (restartable init containers), each sidecar
// waits for the regular containers and for the sidecars declared after it
// to stop, inside its grace period (upstream's termination ordering).
func (m *Manager) KillPod(ctx context.Context, pod *corev1.Pod, rt *runtimestate.Pod, gracePeriod *int64) error {
	if rt == nil {
		return nil
	}
	evPod := eventPod(pod, rt)
	var alive []runtimestate.Container
	for _, c := range rt.Containers {
		if c.State != runtimestate.ContainerExited {
			alive = append(alive, c)
		}
	}
	var order *termOrder
	if pod != nil && hasSidecar(pod) {
		names := make([]string, 0, len(alive))
		for _, c := range alive {
			names = append(names, c.Name)
		}
		order = newTermOrder(m.cfg.Clock, pod, names)
	}
	podIPs := m.hookPodIPs(pod, rt)
	errs := make([]error, len(alive))
	var wg sync.WaitGroup
	for i, c := range alive {
		wg.Go(func() {
			errs[i] = m.killContainer(ctx, killRequest{Pod: pod, EvPod: evPod, Container: c,
				Override: gracePeriod, Order: order, PodIPs: podIPs})
		})
	}
	wg.Wait()
	for _, s := range rt.Sandboxes {
		_, err := m.cfg.Runtime.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: s.ID})
		if err != nil && !errors.Is(err, cri.ErrNotFound) {
			errs = append(errs, fmt.Errorf("stop pod sandbox %q: %w", s.ID, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		m.cfg.Recorder.Eventf(evPod, corev1.EventTypeWarning, eventFailedKillPod, "error killing pod: %v", err)
		return err
	}
	return nil
}

// killRequest is one container to stop.
type killRequest struct {
	// Pod is the config pod, nil when unknown; EvPod is the pod events are
	// recorded against.
	Pod, EvPod *corev1.Pod
	Container  runtimestate.Container
	// Message is the Killing event's message ("" for "Stopping container
	// <name>"); Reason is a podplan.KillReason* (it picks a probe's grace
	// period) or "".
	Message, Reason string
	Override        *int64
	// Order, when set, makes the container wait for its turn.
	Order *termOrder
	// PodIPs are the pod's IPs for an httpGet preStop hook.
	PodIPs []string
}

// killContainer stops one container (upstream killContainer): a Killing
// event with the request's message, the preStop hook when the pod is known
// (inside the grace period), the wait for the container's turn, then
// StopContainer with what is left of the grace period (at least 2 s). A
// container that is already gone is not an error.
func (m *Manager) killContainer(ctx context.Context, r killRequest) error {
	c := r.Container
	if r.Order != nil {
		defer r.Order.stopped(c.Name)
	}
	var annotated *int64
	if r.Pod == nil && r.Override == nil {
		st, err := m.cfg.Runtime.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: c.ID})
		if errors.Is(err, cri.ErrNotFound) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read container %q status: %w", c.ID, err)
		}
		annotated = containerconfig.ReadAnnotations(st.GetStatus().GetAnnotations()).TerminationGracePeriod
	}
	spec := containerSpec(r.Pod, c.Name)
	grace := killGrace(r.Pod, spec, r.Reason, annotated, r.Override)
	message := r.Message
	if message == "" {
		message = fmt.Sprintf("Stopping container %s", c.Name)
	}
	m.cfg.Recorder.ContainerEventf(r.EvPod, c.Name, corev1.EventTypeNormal, eventKilling, "%s", message)
	var hookSeconds, waitSeconds int64
	if spec != nil && spec.Lifecycle != nil && spec.Lifecycle.PreStop != nil && grace > 0 {
		hookSeconds = m.runPreStop(ctx, hookTarget{Pod: r.Pod, Container: spec, ContainerID: c.ID, PodIPs: r.PodIPs}, grace)
	}
	if r.Order != nil && grace-hookSeconds > 0 {
		waitSeconds = r.Order.waitTurn(c.Name, grace-hookSeconds)
	}
	timeout := stopTimeout(grace, hookSeconds, waitSeconds)
	klog.FromContext(ctx).V(2).Info("Killing container with a grace period", "pod", klog.KObj(r.EvPod),
		"containerName", c.Name, "containerID", c.ID, "gracePeriod", timeout)
	_, err := m.cfg.Runtime.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: c.ID, Timeout: timeout})
	if err != nil && !errors.Is(err, cri.ErrNotFound) {
		return fmt.Errorf("stop container %q: %w", c.Name, err)
	}
	return nil
}

// runPreStop runs the container's preStop hook for at most grace seconds
// (upstream executePreStopHook) and returns the whole seconds it took. A
// failure is a FailedPreStopHook event whose message does not carry the
// hook's output (it may hold secrets). A hook still running when the grace
// period ends is abandoned: its context is cancelled.
func (m *Manager) runPreStop(ctx context.Context, t hookTarget, grace int64) int64 {
	logger := klog.FromContext(ctx)
	start := m.cfg.Clock.Now()
	hookCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := m.runHook(hookCtx, t, t.Container.Lifecycle.PreStop); err != nil {
			logger.Error(err, "PreStop hook failed", "pod", klog.KObj(t.Pod), "containerName", t.Container.Name, "containerID", t.ContainerID)
			m.cfg.Recorder.ContainerEventf(t.Pod, t.Container.Name, corev1.EventTypeWarning, eventFailedPreStopHook, "%s", msgPreStopHookFailed)
		}
	}()
	select {
	case <-done:
		logger.V(3).Info("PreStop hook completed", "containerName", t.Container.Name, "containerID", t.ContainerID)
	case <-m.cfg.Clock.After(time.Duration(grace) * time.Second):
		logger.V(2).Info("PreStop hook not completed in grace period", "containerName", t.Container.Name,
			"containerID", t.ContainerID, "gracePeriod", grace)
	}
	return int64(m.cfg.Clock.Since(start).Seconds())
}

// containerSpec finds a container of the pod by name among its regular and
// init containers; nil when the pod is unknown or has no such container.
func containerSpec(pod *corev1.Pod, name string) *corev1.Container {
	if pod == nil {
		return nil
	}
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			return &pod.Spec.Containers[i]
		}
	}
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == name {
			return &pod.Spec.InitContainers[i]
		}
	}
	return nil
}

// hookPodIPs are the IPs an httpGet hook defaults to: the host's for a
// host-network pod, else the newest ready sandbox's.
func (m *Manager) hookPodIPs(pod *corev1.Pod, rt *runtimestate.Pod) []string {
	if pod != nil && pod.Spec.HostNetwork {
		return m.cfg.HostIPs
	}
	if rt == nil {
		return nil
	}
	for _, s := range rt.Sandboxes {
		if s.State == runtimestate.SandboxReady && len(s.IPs) > 0 {
			return s.IPs
		}
	}
	return nil
}
