package csi

import (
	"context"
	"fmt"
	"math"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
)

// The Mounter's reads of the API: the CSIDriver object (from the
// informer, driverobjects.go), the VolumeAttachment (waited for),
// secrets, and the service account tokens a driver is given.

// Upstream's messages (WaitForAttach, getCredentialsFromSecret);
// upstream_test.go pins them.
const (
	msgAttachmentGet = "volume %v has GET error for volume attachment %v: %w"
	msgNotAttached   = "volume %v is not attached for volume attachment %v"
	msgNoSecret      = "failed to find the secret %s in the namespace %s with error: %w"
)

// attachBackoff is how often a VolumeAttachment is read until it is
// attached: upstream's back-off of its wait for an attachment (in
// waitForVolumeAttachDetachStatusWithLister), without the jitter: 500 ms,
// growing by 5% a time to 7 s.
func attachBackoff() wait.Backoff {
	return wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.05, Cap: 7 * time.Second, Steps: math.MaxInt32}
}

// driverPolicy reads the driver's CSIDriver object from the informer
// (waiting for its sync); a missing object is upstream's defaults.
func (m *Mounter) driverPolicy(ctx context.Context, driver string) (driverPolicy, error) {
	d, err := m.csiDrivers.get(ctx, driver)
	if apierrors.IsNotFound(err) {
		return policyOf(nil), nil
	}
	if err != nil {
		return driverPolicy{}, fmt.Errorf("get CSIDriver %q: %w", driver, err)
	}
	return policyOf(d), nil
}

// waitAttached waits until the volume's VolumeAttachment to the node is
// attached and returns its attachment metadata, the publish context. An
// attachment that is missing or not attached yet is read again after
// attachBackoff's step, until ctx ends; one being deleted, or with an
// attach error, fails at once.
func (m *Mounter) waitAttached(ctx context.Context, driver, handle string) (map[string]string, error) {
	name := attachmentName(handle, driver, m.cfg.NodeName)
	log := klog.FromContext(ctx).WithValues("volumeAttachment", name)
	b := attachBackoff()
	for {
		va, err := m.cfg.Client.StorageV1().VolumeAttachments().Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			log.V(4).Info("Waiting for the VolumeAttachment to be created")
		case err != nil:
			return nil, fmt.Errorf(msgAttachmentGet, handle, name, err)
		default:
			attached, err := attachmentStatus(va)
			if err != nil {
				return nil, fmt.Errorf("volume attachment %v of volume %v: %w", name, handle, err)
			}
			if attached {
				return va.Status.AttachmentMetadata, nil
			}
			log.V(4).Info("Waiting for the volume to be attached")
		}
		t := m.cfg.Clock.NewTimer(b.Step())
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf(msgNotAttached+": %w", handle, name, context.Cause(ctx))
		case <-t.C():
		}
	}
}

// secret reads the data of the secret ref names (upstream's
// getCredentialsFromSecret).
func (m *Mounter) secret(ctx context.Context, ref corev1.SecretReference) (map[string]string, error) {
	s, err := m.cfg.Client.CoreV1().Secrets(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf(pluginName+": "+msgNoSecret, ref.Name, ref.Namespace, err)
	}
	out := make(map[string]string, len(s.Data))
	for k, v := range s.Data {
		out[k] = string(v)
	}
	return out, nil
}

// tokens requests a token of the pod's service account, bound to the pod,
// for each of the driver's token requests, and returns them as the
// driver is given them (upstream's podServiceAccountTokenAttrs).
func (m *Mounter) tokens(ctx context.Context, pod *corev1.Pod, requests []storagev1.TokenRequest) (map[string]string, error) {
	statuses := map[string]authenticationv1.TokenRequestStatus{}
	for _, r := range requests {
		tr, err := m.cfg.Client.CoreV1().ServiceAccounts(pod.Namespace).CreateToken(ctx, pod.Spec.ServiceAccountName, tokenRequest(pod, r), metav1.CreateOptions{})
		if err != nil {
			return nil, fmt.Errorf("request a token of service account %s/%s for audience %q: %w", pod.Namespace, pod.Spec.ServiceAccountName, r.Audience, err)
		}
		statuses[r.Audience] = tr.Status
	}
	return tokensAttr(statuses)
}
