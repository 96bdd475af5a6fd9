package kuberuntime

import (
	"context"
	"errors"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"

	"github.com/berthk8s/berth/internal/cri"
	"github.com/berthk8s/berth/internal/runtimestate"
)

// minimumGracePeriodInSeconds is the shortest stop timeout a container
// gets, to avoid needless SIGKILLs (upstream's constant).
const minimumGracePeriodInSeconds = 2

// gracePeriodSeconds is the stop timeout of a container: the override when
// given, else the pod's deletion grace period, else its termination grace
// period, else the one annotated on the container (pod unknown); never less
// than 2 s.
func gracePeriodSeconds(pod *corev1.Pod, annotated, override *int64) int64 {
	grace := int64(minimumGracePeriodInSeconds)
	switch {
	case override != nil:
		grace = *override
	case pod != nil && pod.DeletionGracePeriodSeconds != nil:
		grace = *pod.DeletionGracePeriodSeconds
	case pod != nil && pod.Spec.TerminationGracePeriodSeconds != nil:
		grace = *pod.Spec.TerminationGracePeriodSeconds
	case pod == nil && annotated != nil:
		grace = *annotated
	}
	return max(grace, minimumGracePeriodInSeconds)
}

// eventPod is the pod events are recorded against: the pod itself, or one
// rebuilt from the runtime's labels for a pod berth no longer knows.
func eventPod(pod *corev1.Pod, rt *runtimestate.Pod) *corev1.Pod {
	if pod != nil {
		return pod
	}
	return &corev1.Pod{ObjectMeta: v1.ObjectMeta{Name: rt.Name, Namespace: rt.Namespace, UID: rt.UID}}
}

// KillPod stops every container of the pod that is not exited, in
// parallel, then stops every sandbox. pod may be nil (a pod found only in
// the runtime); gracePeriod overrides the pod's grace period when set.
func (m *Manager) KillPod(ctx context.Context, pod *corev1.Pod, rt *runtimestate.Pod, gracePeriod *int64) error {
	if rt == nil {
		return nil
	}
	evPod := eventPod(pod, rt)
	errs := make([]error, len(rt.Containers))
	var wg sync.WaitGroup
	for i := range rt.Containers {
		c := rt.Containers[i]
		if c.State == runtimestate.ContainerExited {
			continue
		}
		wg.Go(func() {
			errs[i] = m.killContainer(ctx, pod, evPod, c, "", gracePeriod)
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

// killContainer stops one container with its grace period and records a
// Killing event with message (default "Stopping container <name>"). A
// container that is already gone is not an error.
func (m *Manager) killContainer(ctx context.Context, pod, evPod *corev1.Pod, c runtimestate.Container, message string, override *int64) error {
	var annotated *int64
	if pod == nil && override == nil {
		st, err := m.cfg.Runtime.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: c.ID})
		if errors.Is(err, cri.ErrNotFound) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read container %q status: %w", c.ID, err)
		}
		annotated = readAnnotations(st.GetStatus().GetAnnotations()).TerminationGracePeriod
	}
	grace := gracePeriodSeconds(pod, annotated, override)
	if message == "" {
		message = fmt.Sprintf("Stopping container %s", c.Name)
	}
	m.cfg.Recorder.ContainerEventf(evPod, c.Name, corev1.EventTypeNormal, eventKilling, "%s", message)
	klog.FromContext(ctx).V(2).Info("Killing container with a grace period", "pod", klog.KObj(evPod),
		"containerName", c.Name, "containerID", c.ID, "gracePeriod", grace)
	_, err := m.cfg.Runtime.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: c.ID, Timeout: grace})
	if err != nil && !errors.Is(err, cri.ErrNotFound) {
		return fmt.Errorf("stop container %q: %w", c.Name, err)
	}
	return nil
}
