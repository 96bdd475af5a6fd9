package dra

import (
	"context"
	"time"

	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
)

// wipeBackoff is how a failed wipe is retried, upstream's
// (wipeResourceSlices).
var wipeBackoff = wait.Backoff{Duration: time.Second, Factor: 2, Jitter: 0.2, Cap: 5 * time.Minute, Steps: 100}

// wipeSelector selects the node's ResourceSlices, of one driver unless
// driver is "" (all of them), upstream's field selector.
func wipeSelector(node, driver string) string {
	s := fields.Set{resourceapi.ResourceSliceSelectorNodeName: node}
	if driver != "" {
		s[resourceapi.ResourceSliceSelectorDriver] = driver
	}
	return s.String()
}

// wipe deletes the node's ResourceSlices of the driver ("" all drivers),
// retrying as upstream until it succeeds, there are none, the retries
// run out or ctx ends. The Node must exist first: a node that is not
// registered yet has no slices to wipe but may get them.
func (m *Manager) wipe(ctx context.Context, driver string) {
	if m.cfg.Client == nil {
		return
	}
	log := klog.FromContext(ctx).WithValues("driver", driver)
	b := wipeBackoff
	for b.Steps > 0 {
		if m.wipeOnce(ctx, log, driver) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-m.cfg.Clock.After(b.Step()):
		}
	}
	log.Info("Gave up deleting the node's ResourceSlices of a DRA driver")
}

// wipeOnce is one try of wipe; true when there is nothing left to do.
func (m *Manager) wipeOnce(ctx context.Context, log klog.Logger, driver string) bool {
	if _, err := m.cfg.Client.CoreV1().Nodes().Get(ctx, m.cfg.NodeName, metav1.GetOptions{}); err != nil {
		if !apierrors.IsNotFound(err) {
			log.Error(err, "Unexpected error checking for node")
		}
		return false
	}
	sel := wipeSelector(m.cfg.NodeName, driver)
	err := m.cfg.Client.ResourceV1().ResourceSlices().DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{FieldSelector: sel})
	switch {
	case err == nil:
		log.V(3).Info("Deleted ResourceSlices", "fieldSelector", sel)
		return true
	case apierrors.IsNotFound(err):
		log.V(5).Info("ResourceSlices not found, nothing to delete.", "fieldSelector", sel)
		return true
	default:
		log.V(3).Info("Deleting ResourceSlice failed, retrying", "fieldSelector", sel, "err", err)
		return false
	}
}
