package mirrorpod

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// Keeper keeps static pods' mirror pods in the API server (podsync's
// Mirrors), deciding with Plan from the mirror pods the API source
// reports. Its fields are set once, by the wiring; safe for concurrent
// use.
type Keeper struct {
	Client *Client
	// Lookup returns the mirror pod of a full name (name_namespace).
	Lookup func(fullName string) (*corev1.Pod, bool)
	// Terminating reports whether the pod worker is stopping uid.
	Terminating func(uid types.UID) bool
}

// Sync creates, replaces or leaves the mirror pod of a desired static pod.
func (m *Keeper) Sync(ctx context.Context, static *corev1.Pod) error {
	mirror, _ := m.Lookup(podutil.FullName(static))
	switch Plan(static, mirror, m.Terminating(static.UID)) {
	case Create:
		return m.Client.Create(ctx, static)
	case Recreate:
		if err := m.Client.Delete(ctx, mirror.Name, mirror.Namespace, mirror.UID); err != nil {
			return err
		}
		return m.Client.Create(ctx, static)
	}
	return nil
}

// Delete removes the mirror pod of a static pod no source wants any more,
// unless a newer static pod of the same name owns it now.
func (m *Keeper) Delete(ctx context.Context, static *corev1.Pod) error {
	mirror, ok := m.Lookup(podutil.FullName(static))
	if !ok || !IsMirrorOf(mirror, static) {
		return nil
	}
	if err := m.Client.Delete(ctx, mirror.Name, mirror.Namespace, mirror.UID); err != nil {
		return fmt.Errorf("delete mirror pod: %w", err)
	}
	return nil
}
