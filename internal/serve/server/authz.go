package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
)

// Authorizer decides one authorization question. allowed false with a nil
// error is a denial (or no opinion: both are 403 at the kubelet).
type Authorizer interface {
	Authorize(ctx context.Context, a Attributes) (allowed bool, reason string, err error)
}

// AlwaysAllow is authorization mode AlwaysAllow.
type AlwaysAllow struct{}

// Authorize implements Authorizer.
func (AlwaysAllow) Authorize(context.Context, Attributes) (bool, string, error) { return true, "", nil }

// SubjectAccessReviewer creates SubjectAccessReviews: client-go's
// AuthorizationV1().SubjectAccessReviews() satisfies it.
type SubjectAccessReviewer interface {
	Create(ctx context.Context, review *authorizationv1.SubjectAccessReview, opts metav1.CreateOptions) (*authorizationv1.SubjectAccessReview, error)
}

// WebhookAuthzConfig configures a WebhookAuthorizer.
type WebhookAuthzConfig struct {
	Reviews SubjectAccessReviewer
	// AuthorizedTTL and UnauthorizedTTL are how long allowed and not
	// allowed verdicts are cached; 0 disables caching that verdict.
	AuthorizedTTL   time.Duration
	UnauthorizedTTL time.Duration
	Clock           clock.PassiveClock
}

// WebhookAuthorizer is authorization mode Webhook: every question becomes a
// SubjectAccessReview, its verdict cached by the full review spec. A failed
// review call is not cached. Safe for concurrent use.
type WebhookAuthorizer struct {
	cfg   WebhookAuthzConfig
	cache *ttlCache[sarVerdict]
}

type sarVerdict struct {
	allowed bool
	reason  string
}

// NewWebhookAuthorizer validates cfg and returns the authorizer.
func NewWebhookAuthorizer(cfg WebhookAuthzConfig) (*WebhookAuthorizer, error) {
	if cfg.Reviews == nil || cfg.Clock == nil {
		return nil, errors.New("create webhook authorizer: a SubjectAccessReview client and a clock are required")
	}
	return &WebhookAuthorizer{cfg: cfg, cache: newTTLCache[sarVerdict](cfg.Clock)}, nil
}

// reviewSpec is the SubjectAccessReview spec for a.
func reviewSpec(a Attributes) authorizationv1.SubjectAccessReviewSpec {
	spec := authorizationv1.SubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Verb: a.Verb, Version: "v1", Resource: a.Resource, Subresource: a.Subresource, Name: a.Name,
		},
	}
	if a.User != nil {
		spec.User, spec.UID, spec.Groups = a.User.Name, a.User.UID, a.User.Groups
		if len(a.User.Extra) > 0 {
			spec.Extra = map[string]authorizationv1.ExtraValue{}
			for k, v := range a.User.Extra {
				spec.Extra[k] = v
			}
		}
	}
	return spec
}

// Authorize implements Authorizer.
func (w *WebhookAuthorizer) Authorize(ctx context.Context, a Attributes) (bool, string, error) {
	spec := reviewSpec(a)
	keyBytes, err := json.Marshal(spec)
	if err != nil {
		return false, "", fmt.Errorf("encode SubjectAccessReview: %w", err)
	}
	key := string(keyBytes)
	if v, ok := w.cache.get(key); ok {
		return v.allowed, v.reason, nil
	}
	review, err := w.cfg.Reviews.Create(ctx, &authorizationv1.SubjectAccessReview{Spec: spec}, metav1.CreateOptions{})
	if err != nil {
		return false, "", fmt.Errorf("create SubjectAccessReview: %w", err)
	}
	v := sarVerdict{allowed: review.Status.Allowed && !review.Status.Denied, reason: review.Status.Reason}
	if ttl := w.ttl(v.allowed); ttl > 0 {
		w.cache.set(key, v, ttl)
	}
	return v.allowed, v.reason, nil
}

func (w *WebhookAuthorizer) ttl(allowed bool) time.Duration {
	if allowed {
		return w.cfg.AuthorizedTTL
	}
	return w.cfg.UnauthorizedTTL
}
