package kuberuntime

import (
	"context"
	"errors"
	"fmt"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"

	"github.com/berthk8s/berth/internal/cri"
	"github.com/berthk8s/berth/internal/runtimestate"
)

// RemovePod removes every container and then every sandbox of a pod whose
// containers have all stopped. Things already gone are not errors.
func (m *Manager) RemovePod(ctx context.Context, rt *runtimestate.Pod) error {
	if rt == nil {
		return nil
	}
	var errs []error
	for _, c := range rt.Containers {
		errs = append(errs, m.removeContainer(ctx, c))
	}
	for _, s := range rt.Sandboxes {
		_, err := m.cfg.Runtime.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: s.ID})
		if err != nil && !errors.Is(err, cri.ErrNotFound) {
			errs = append(errs, fmt.Errorf("remove pod sandbox %q: %w", s.ID, err))
		}
	}
	return errors.Join(errs...)
}

func (m *Manager) removeContainer(ctx context.Context, c runtimestate.Container) error {
	_, err := m.cfg.Runtime.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: c.ID})
	if err != nil && !errors.Is(err, cri.ErrNotFound) {
		return fmt.Errorf("remove container %q (%s): %w", c.Name, c.ID, err)
	}
	return nil
}

// exitedToPrune lists the exited containers of a pod beyond the newest
// exited instance of each container name: the newest is kept for its
// status and its logs (kubectl logs --previous). rt.Containers is newest
// first.
func exitedToPrune(rt *runtimestate.Pod) []runtimestate.Container {
	if rt == nil {
		return nil
	}
	seen := map[string]bool{}
	var out []runtimestate.Container
	for _, c := range rt.Containers {
		if c.State != runtimestate.ContainerExited {
			continue
		}
		if seen[c.Name] {
			out = append(out, c)
			continue
		}
		seen[c.Name] = true
	}
	return out
}

// pruneExited removes the exited containers exitedToPrune lists. Failures
// are logged only: the next sync tries again.
func (m *Manager) pruneExited(ctx context.Context, rt *runtimestate.Pod) {
	for _, c := range exitedToPrune(rt) {
		if err := m.removeContainer(ctx, c); err != nil {
			klog.FromContext(ctx).Error(err, "Cannot prune exited container", "podUID", rt.UID)
		}
	}
}
