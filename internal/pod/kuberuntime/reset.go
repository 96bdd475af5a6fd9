package kuberuntime

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/berthk8s/berth/internal/pod/podplan"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// resetContainers performs a RestartAllContainers reset, the plan's Reset
// in its order (upstream SyncPod's reset step): each container that has
// not exited is killed (reason RestartAllContainers with upstream's
// message, a grace period of 0, so no preStop hook and the 2 s minimum),
// then every container is removed. Its log files stay. The sandbox is left
// alone. The first failure stops the reset: the next sync computes what is
// left to reset.
func (m *Manager) resetContainers(ctx context.Context, pod *corev1.Pod, rt *runtimestate.Pod, reset []podplan.ResetContainer) error {
	logger := klog.FromContext(ctx)
	var noGrace int64
	for _, r := range reset {
		c := runtimestate.Container{ID: r.ID, Name: r.Name}
		if known := runtimeContainer(rt, r.ID); known != nil {
			c = *known
		}
		logger.V(3).Info("Removing container before pod restarts", "containerName", c.Name, "containerID", c.ID)
		if r.Kill {
			req := killRequest{Pod: pod, EvPod: pod, Container: c, Override: &noGrace,
				Reason: podplan.KillReasonRestartAllContainers, Message: podplan.KillMessageRestartAllContainers}
			if err := m.killContainer(ctx, req); err != nil {
				return fmt.Errorf("reset container %q: %w", c.Name, err)
			}
		}
		if err := m.RemoveContainer(ctx, c); err != nil {
			return fmt.Errorf("reset container %q: %w", c.Name, err)
		}
	}
	return nil
}

// runtimeContainer returns the runtime container with the given ID, or nil.
func runtimeContainer(rt *runtimestate.Pod, id string) *runtimestate.Container {
	if rt == nil {
		return nil
	}
	for i := range rt.Containers {
		if rt.Containers[i].ID == id {
			return &rt.Containers[i]
		}
	}
	return nil
}
