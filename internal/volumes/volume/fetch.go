package volume

import (
	"context"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/berthk8s/berth/internal/volumes/transient"
)

// fetch gets the objects and tokens a volume's content depends on: the
// configMaps and secrets from Objects, the tokens and cluster trust
// bundles from the API server.
func (m *Manager) fetch(ctx context.Context, pod *corev1.Pod, v corev1.Volume, st *podState) (Inputs, error) {
	in := Inputs{
		ConfigMaps: map[string]*corev1.ConfigMap{}, Secrets: map[string]*corev1.Secret{}, Tokens: map[string]string{},
		TrustAnchors: map[string][]byte{}, PodCertificates: map[string]PodCertificate{},
	}
	if m.cfg.NodeAllocatable != nil {
		in.Allocatable = m.cfg.NodeAllocatable()
	}
	s := v.VolumeSource
	var err error
	switch {
	case s.ConfigMap != nil:
		err = m.fetchConfigMap(ctx, pod, st, s.ConfigMap.Name, isTrue(s.ConfigMap.Optional), in.ConfigMaps)
	case s.Secret != nil:
		err = m.fetchSecret(ctx, pod, st, s.Secret.SecretName, isTrue(s.Secret.Optional), in.Secrets)
	case s.Projected != nil:
		for i, src := range s.Projected.Sources {
			switch {
			case src.ConfigMap != nil:
				err = m.fetchConfigMap(ctx, pod, st, src.ConfigMap.Name, isTrue(src.ConfigMap.Optional), in.ConfigMaps)
			case src.Secret != nil:
				err = m.fetchSecret(ctx, pod, st, src.Secret.Name, isTrue(src.Secret.Optional), in.Secrets)
			case src.ServiceAccountToken != nil:
				key := tokenKey(v.Name, src.ServiceAccountToken.Path)
				in.Tokens[key], err = m.token(ctx, pod, src.ServiceAccountToken, key, st)
			case src.ClusterTrustBundle != nil:
				in.TrustAnchors[tokenKey(v.Name, src.ClusterTrustBundle.Path)], err = m.trustAnchors(ctx, pod, st, src.ClusterTrustBundle)
			case src.PodCertificate != nil:
				in.PodCertificates[certKey(v.Name, i)], err = m.podCertificate(ctx, pod, st, v.Name, i)
			}
			if err != nil {
				return in, err
			}
		}
	}
	return in, err
}

// Objects reads the configMaps and secrets volumes hold: berth's one
// source of them (internal/volumes/objectcache). A missing object is an error for
// which apierrors.IsNotFound is true.
type Objects interface {
	ConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error)
	Secret(ctx context.Context, namespace, name string) (*corev1.Secret, error)
}

// fetchConfigMap reads one configMap into into (fetchObject).
func (m *Manager) fetchConfigMap(ctx context.Context, pod *corev1.Pod, st *podState, name string, optional bool, into map[string]*corev1.ConfigMap) error {
	if m.cfg.Objects == nil {
		return fetchObject(ctx, m, pod, st, "configmap", name, optional, nil, into)
	}
	return fetchObject(ctx, m, pod, st, "configmap", name, optional, m.cfg.Objects.ConfigMap, into)
}

// fetchSecret reads one secret into into (fetchObject).
func (m *Manager) fetchSecret(ctx context.Context, pod *corev1.Pod, st *podState, name string, optional bool, into map[string]*corev1.Secret) error {
	if m.cfg.Objects == nil {
		return fetchObject(ctx, m, pod, st, "secret", name, optional, nil, into)
	}
	return fetchObject(ctx, m, pod, st, "secret", name, optional, m.cfg.Objects.Secret, into)
}

// fetchObject reads one object of the pod's namespace into into, nil when
// it does not exist: the payload decides what a missing object means. A
// required one missing right after the pod was created is retried first
// (package transient): it may be created together with the pod. get is
// nil in standalone mode, where no object can be read.
func fetchObject[T any](ctx context.Context, m *Manager, pod *corev1.Pod, st *podState, kind, name string, optional bool,
	get func(ctx context.Context, namespace, name string) (*T, error), into map[string]*T) error {
	if get == nil {
		return fmt.Errorf("%s %q needs an API server (berth runs standalone)", kind, name)
	}
	var obj *T
	err := m.retry(ctx, pod, st, "get "+kind, func(ctx context.Context) (err error) {
		obj, err = get(ctx, pod.Namespace, name)
		return missingOptional(err, optional)
	})
	switch {
	case apierrors.IsNotFound(err):
		into[name] = nil
	case err != nil:
		return err // it names the object
	default:
		into[name] = obj
	}
	return nil
}

// missingOptional is nil for an optional object's NotFound, which is an
// answer, not a failure to retry; err otherwise. The caller's object
// pointer is nil then, as for any NotFound.
func missingOptional(err error, optional bool) error {
	if optional && apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// retry runs one API read of the pod's volumes, retrying at once (short
// back-off, package transient) the failures that clear on their own, so
// that they neither fail the pod's sync nor wait out the worker's back-off.
func (m *Manager) retry(ctx context.Context, pod *corev1.Pod, st *podState, what string, op func(context.Context) error) error {
	isTransient := func(err error) bool {
		return transient.Is(err, transient.Recent(st.seen, m.cfg.Clock.Now()))
	}
	logRetry := func(err error, wait time.Duration) {
		klog.FromContext(ctx).V(2).Info("Retrying a failure expected to clear on its own",
			"pod", klog.KObj(pod), "operation", what, "wait", wait, "err", err)
	}
	return transient.Do(ctx, m.cfg.Clock, m.cfg.Retry, isTransient, logRetry, op)
}

// podCertificate returns the credential of a podCertificate source
// (PodCertificates). While the first certificate is not issued it retries
// for a few seconds (package transient: a signer answers within them),
// then fails, and the volume is not ready.
func (m *Manager) podCertificate(ctx context.Context, pod *corev1.Pod, st *podState, volume string, index int) (PodCertificate, error) {
	if m.cfg.PodCertificates == nil {
		return PodCertificate{}, fmt.Errorf("podCertificate source %d needs an API server (berth runs standalone)", index)
	}
	var cred PodCertificate
	err := m.retry(ctx, pod, st, "pod certificate", func(ctx context.Context) (err error) {
		cred.Key, cred.Chain, err = m.cfg.PodCertificates.Bundle(ctx, pod, volume, index)
		return err
	})
	return cred, err
}

// token returns the cached token of a projected source or requests a new
// one when it needs a refresh; a failed refresh keeps a token that has not
// expired yet, as upstream's token manager.
func (m *Manager) token(ctx context.Context, pod *corev1.Pod, src *corev1.ServiceAccountTokenProjection, key string, st *podState) (string, error) {
	now := m.cfg.Clock.Now()
	cached := st.tokens[key]
	if !needsRefresh(cached, now) {
		return cached.Status.Token, nil
	}
	sa := serviceAccountName(pod)
	if m.cfg.Client == nil {
		return "", fmt.Errorf("token of service account %q needs an API server (berth runs standalone)", sa)
	}
	var tr *authenticationv1.TokenRequest
	request := func(ctx context.Context) (err error) {
		tr, err = m.cfg.Client.CoreV1().ServiceAccounts(pod.Namespace).CreateToken(ctx, sa, tokenRequest(pod, src), metav1.CreateOptions{})
		return err
	}
	var err error
	if expired(cached, now) {
		// Nothing to fall back on: retry what clears on its own (the node
		// authorizer not knowing the pod yet) here, not in the worker.
		err = m.retry(ctx, pod, st, "request token", request)
	} else {
		err = request(ctx)
	}
	if err != nil {
		if !expired(cached, now) {
			klog.FromContext(ctx).Error(err, "Token refresh failed, keeping the current token", "pod", klog.KObj(pod), "serviceAccount", sa)
			return cached.Status.Token, nil
		}
		return "", fmt.Errorf("request token of service account %q: %w", sa, err)
	}
	st.tokens[key] = tr
	return tr.Status.Token, nil
}
