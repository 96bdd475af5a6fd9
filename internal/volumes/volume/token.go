package volume

import (
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
)

const (
	// defaultTokenSeconds is the API server's default expirationSeconds of
	// a serviceAccountToken projection (kube-api-access volumes carry an
	// explicit 3607).
	defaultTokenSeconds int64 = 3600
	// minTokenSeconds is the shortest lifetime the API accepts.
	minTokenSeconds int64 = 600
	// maxTokenAge forces a refresh of a token older than a day, as
	// upstream's token manager.
	maxTokenAge = 24 * time.Hour
)

// tokenRequest builds the TokenRequest for a projected serviceAccountToken
// source: the source's audience (none means the API server's), its
// lifetime, and bound to the pod, which NodeRestriction requires.
func tokenRequest(pod *corev1.Pod, src *corev1.ServiceAccountTokenProjection) *authenticationv1.TokenRequest {
	seconds := defaultTokenSeconds
	if src.ExpirationSeconds != nil {
		seconds = max(*src.ExpirationSeconds, minTokenSeconds)
	}
	var audiences []string
	if src.Audience != "" {
		audiences = []string{src.Audience}
	}
	return &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{
			Audiences:         audiences,
			ExpirationSeconds: &seconds,
			BoundObjectRef: &authenticationv1.BoundObjectReference{
				APIVersion: "v1",
				Kind:       "Pod",
				Name:       pod.Name,
				UID:        pod.UID,
			},
		},
	}
}

// serviceAccountName is the pod's service account, "default" when unset.
func serviceAccountName(pod *corev1.Pod) string {
	if pod.Spec.ServiceAccountName != "" {
		return pod.Spec.ServiceAccountName
	}
	return "default"
}

// needsRefresh reports whether a token must be requested again: when none
// is cached, when 80% of its lifetime has passed, or when it is older than
// a day, as upstream's token manager (without its jitter).
func needsRefresh(tr *authenticationv1.TokenRequest, now time.Time) bool {
	if tr == nil || tr.Status.Token == "" {
		return true
	}
	exp := tr.Status.ExpirationTimestamp.Time
	if tr.Spec.ExpirationSeconds == nil {
		return !now.Before(exp)
	}
	ttl := time.Duration(*tr.Spec.ExpirationSeconds) * time.Second
	issued := exp.Add(-ttl)
	if !now.Before(issued.Add(maxTokenAge)) {
		return true
	}
	return !now.Before(exp.Add(-ttl / 5))
}

// expired reports whether a cached token can no longer be used even as a
// fallback when a refresh fails.
func expired(tr *authenticationv1.TokenRequest, now time.Time) bool {
	return tr == nil || tr.Status.Token == "" || !now.Before(tr.Status.ExpirationTimestamp.Time)
}
