package podsync

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/berthk8s/berth/internal/pod/podplan"
	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// eventFailedPrepareDynamicResources is upstream's
// events.FailedPrepareDynamicResources.
const eventFailedPrepareDynamicResources = "FailedPrepareDynamicResources"

// prepareClaims is the "claims prepared" step of a pod with
// resourceClaims or an extended resource claim (podutil.UsesResourceClaims):
// before its sandbox is created (upstream prepares there,
// in SyncPod), the DRA manager prepares its claims. A pod whose claims are
// not ready waits: a Warning event FailedPrepareDynamicResources says
// why, and the sync fails (with this error, which the caller wraps and
// its PodReadyToStartContainers condition shows), so the worker retries
// after its back-off.
func (s *Syncer) prepareClaims(ctx context.Context, pod *corev1.Pod, plan podplan.Actions) error {
	if !plan.CreateSandbox || !podutil.UsesResourceClaims(pod) {
		return nil
	}
	err := errors.New("berth runs without a DRA manager")
	if s.cfg.Claims != nil {
		err = s.cfg.Claims.Prepare(ctx, pod)
	}
	if err == nil {
		return nil
	}
	if s.cfg.Recorder != nil {
		s.cfg.Recorder.Eventf(pod, corev1.EventTypeWarning, eventFailedPrepareDynamicResources, "Failed to prepare dynamic resources: %v", err)
	}
	klog.FromContext(ctx).Error(err, "Failed to prepare dynamic resources", "pod", klog.KObj(pod))
	return err
}
