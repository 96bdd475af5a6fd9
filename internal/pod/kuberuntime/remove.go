package kuberuntime

import (
	"context"
	"errors"
	"fmt"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/berthk8s/berth/internal/platform/cri"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// RemovePod removes every container and then every sandbox of a pod whose
// containers have all stopped. Things already gone are not errors.
func (m *Manager) RemovePod(ctx context.Context, rt *runtimestate.Pod) error {
	if rt == nil {
		return nil
	}
	var errs []error
	for _, c := range rt.Containers {
		errs = append(errs, m.RemoveContainer(ctx, c))
	}
	for _, s := range rt.Sandboxes {
		errs = append(errs, m.RemoveSandbox(ctx, s.ID))
	}
	return errors.Join(errs...)
}

// RemoveSandbox removes one pod sandbox; one already gone is not an error.
func (m *Manager) RemoveSandbox(ctx context.Context, id string) error {
	_, err := m.cfg.Runtime.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: id})
	if err != nil && !errors.Is(err, cri.ErrNotFound) {
		return fmt.Errorf("remove pod sandbox %q: %w", id, err)
	}
	return nil
}

// RemoveContainer removes one container; one already gone is not an
// error. Which dead containers go is the container GC's decision
// (internal/node/gc); a pod's own removal is RemovePod's.
func (m *Manager) RemoveContainer(ctx context.Context, c runtimestate.Container) error {
	_, err := m.cfg.Runtime.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: c.ID})
	if err != nil && !errors.Is(err, cri.ErrNotFound) {
		return fmt.Errorf("remove container %q (%s): %w", c.Name, c.ID, err)
	}
	return nil
}
