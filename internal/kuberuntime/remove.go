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

// sandboxesToPrune lists the sandboxes that can go once the pruned
// containers are removed: not the newest, not ready, and holding no other
// container.
func sandboxesToPrune(rt *runtimestate.Pod, pruned []runtimestate.Container) []runtimestate.Sandbox {
	if rt == nil || len(rt.Sandboxes) < 2 {
		return nil
	}
	gone := map[string]bool{}
	for _, c := range pruned {
		gone[c.ID] = true
	}
	used := map[string]bool{}
	for _, c := range rt.Containers {
		if !gone[c.ID] {
			used[c.SandboxID] = true
		}
	}
	var out []runtimestate.Sandbox
	for _, s := range rt.Sandboxes[1:] {
		if s.State != runtimestate.SandboxReady && !used[s.ID] {
			out = append(out, s)
		}
	}
	return out
}

// pruneExited removes the exited containers exitedToPrune lists, then the
// sandboxes left empty that sandboxesToPrune lists. Failures are logged
// only: the next sync tries again.
func (m *Manager) pruneExited(ctx context.Context, rt *runtimestate.Pod) {
	logger := klog.FromContext(ctx)
	pruned := exitedToPrune(rt)
	for _, c := range pruned {
		if err := m.removeContainer(ctx, c); err != nil {
			logger.Error(err, "Cannot prune exited container")
			return
		}
	}
	for _, s := range sandboxesToPrune(rt, pruned) {
		_, err := m.cfg.Runtime.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: s.ID})
		if err != nil && !errors.Is(err, cri.ErrNotFound) {
			logger.Error(err, "Cannot prune old pod sandbox", "sandboxID", s.ID)
		}
	}
}
