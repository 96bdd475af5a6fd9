package agent

import (
	"context"
	"fmt"

	"github.com/berthk8s/berth/internal/podkit/podutil"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berthk8s/berth/internal/cluster/mirrorpod"
)

// mirrors keeps static pods' mirror pods in the API server, deciding with
// mirrorpod.Plan from the mirror pods the API source reports.
type mirrors struct {
	client *mirrorpod.Client
	// lookup returns the mirror pod of a full name (name_namespace).
	lookup func(fullName string) (*corev1.Pod, bool)
	// terminating reports whether the pod worker is stopping uid.
	terminating func(uid types.UID) bool
}

// Sync creates, replaces or leaves the mirror pod of a desired static pod.
func (m *mirrors) Sync(ctx context.Context, static *corev1.Pod) error {
	mirror, _ := m.lookup(podutil.FullName(static))
	switch mirrorpod.Plan(static, mirror, m.terminating(static.UID)) {
	case mirrorpod.Create:
		return m.client.Create(ctx, static)
	case mirrorpod.Recreate:
		if err := m.client.Delete(ctx, mirror.Name, mirror.Namespace, mirror.UID); err != nil {
			return err
		}
		return m.client.Create(ctx, static)
	}
	return nil
}

// Delete removes the mirror pod of a static pod no source wants any more,
// unless a newer static pod of the same name owns it now.
func (m *mirrors) Delete(ctx context.Context, static *corev1.Pod) error {
	mirror, ok := m.lookup(podutil.FullName(static))
	if !ok || !mirrorpod.IsMirrorOf(mirror, static) {
		return nil
	}
	if err := m.client.Delete(ctx, mirror.Name, mirror.Namespace, mirror.UID); err != nil {
		return fmt.Errorf("delete mirror pod: %w", err)
	}
	return nil
}
