package server

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
)

// maxCacheEntries bounds each decision cache; expired entries are swept
// first, then arbitrary ones.
const maxCacheEntries = 4096

// TokenReviewer creates TokenReviews: client-go's
// AuthenticationV1().TokenReviews() satisfies it.
type TokenReviewer interface {
	Create(ctx context.Context, review *authenticationv1.TokenReview, opts metav1.CreateOptions) (*authenticationv1.TokenReview, error)
}

// WebhookTokenAuthenticator authenticates bearer tokens with TokenReview
// and caches the verdicts, valid and invalid alike, for TTL, as upstream
// does; a failed review call is not cached. Safe for concurrent use.
type WebhookTokenAuthenticator struct {
	reviews TokenReviewer
	ttl     time.Duration
	cache   *ttlCache[tokenVerdict]
}

type tokenVerdict struct {
	user *User
	ok   bool
}

// NewWebhookTokenAuthenticator returns an authenticator asking reviews.
func NewWebhookTokenAuthenticator(reviews TokenReviewer, ttl time.Duration, clk clock.PassiveClock) (*WebhookTokenAuthenticator, error) {
	if reviews == nil || clk == nil {
		return nil, errors.New("create token authenticator: a TokenReview client and a clock are required")
	}
	return &WebhookTokenAuthenticator{reviews: reviews, ttl: ttl, cache: newTTLCache[tokenVerdict](clk)}, nil
}

// AuthenticateToken implements TokenAuthenticator.
func (a *WebhookTokenAuthenticator) AuthenticateToken(ctx context.Context, token string) (*User, bool, error) {
	sum := sha256.Sum256([]byte(token))
	key := string(sum[:])
	if v, ok := a.cache.get(key); ok {
		return v.user, v.ok, nil
	}
	review, err := a.reviews.Create(ctx, &authenticationv1.TokenReview{
		Spec: authenticationv1.TokenReviewSpec{Token: token},
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, false, fmt.Errorf("create TokenReview: %w", err)
	}
	st := review.Status
	if !st.Authenticated && st.Error != "" {
		return nil, false, fmt.Errorf("TokenReview: %s", st.Error)
	}
	v := tokenVerdict{ok: st.Authenticated}
	if st.Authenticated {
		v.user = &User{Name: st.User.Username, UID: st.User.UID, Groups: st.User.Groups}
		if len(st.User.Extra) > 0 {
			v.user.Extra = map[string][]string{}
			for k, vals := range st.User.Extra {
				v.user.Extra[k] = vals
			}
		}
	}
	if a.ttl > 0 {
		a.cache.set(key, v, a.ttl)
	}
	return v.user, v.ok, nil
}

// ttlCache maps keys to values that expire on the injected clock.
type ttlCache[V any] struct {
	clock clock.PassiveClock
	// mu guards entries.
	mu      sync.Mutex
	entries map[string]ttlEntry[V]
}

type ttlEntry[V any] struct {
	value   V
	expires time.Time
}

func newTTLCache[V any](clk clock.PassiveClock) *ttlCache[V] {
	return &ttlCache[V]{clock: clk, entries: map[string]ttlEntry[V]{}}
}

func (c *ttlCache[V]) get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || !c.clock.Now().Before(e.expires) {
		var zero V
		return zero, false
	}
	return e.value, true
}

func (c *ttlCache[V]) set(key string, v V, ttl time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	if len(c.entries) >= maxCacheEntries {
		for k, e := range c.entries {
			if !now.Before(e.expires) {
				delete(c.entries, k)
			}
		}
		for k := range c.entries {
			if len(c.entries) < maxCacheEntries {
				break
			}
			delete(c.entries, k)
		}
	}
	c.entries[key] = ttlEntry[V]{value: v, expires: now.Add(ttl)}
}
