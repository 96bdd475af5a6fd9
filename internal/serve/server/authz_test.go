package server

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

// fakeSARs allows what allow says, records the specs and counts calls.
type fakeSARs struct {
	mu    sync.Mutex
	specs []authorizationv1.SubjectAccessReviewSpec
	allow func(authorizationv1.SubjectAccessReviewSpec) bool
	fail  bool
}

func (f *fakeSARs) Create(_ context.Context, r *authorizationv1.SubjectAccessReview, _ metav1.CreateOptions) (*authorizationv1.SubjectAccessReview, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.specs = append(f.specs, r.Spec)
	if f.fail {
		return nil, errors.New("connection refused")
	}
	out := r.DeepCopy()
	out.Status.Allowed = f.allow(r.Spec)
	if !out.Status.Allowed {
		out.Status.Reason = "no RBAC policy matched"
	}
	return out, nil
}

func TestWebhookAuthorizerSpec(t *testing.T) {
	reviews := &fakeSARs{allow: func(authorizationv1.SubjectAccessReviewSpec) bool { return true }}
	w, err := NewWebhookAuthorizer(WebhookAuthzConfig{Reviews: reviews, Clock: clocktesting.NewFakePassiveClock(time.Unix(0, 0))})
	if err != nil {
		t.Fatal(err)
	}
	u := &User{Name: "alice", UID: "u1", Groups: []string{"devs", AuthenticatedGroup}, Extra: map[string][]string{"scopes": {"a"}}}
	if ok, _, err := w.Authorize(context.Background(), RequestAttributes(u, "GET", "/stats/summary", "node-1")[0]); !ok || err != nil {
		t.Fatalf("allowed=%v err=%v", ok, err)
	}
	want := []authorizationv1.SubjectAccessReviewSpec{{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "get", Version: "v1", Resource: "nodes", Subresource: "stats", Name: "node-1"},
		User:               "alice", UID: "u1", Groups: []string{"devs", AuthenticatedGroup},
		Extra: map[string]authorizationv1.ExtraValue{"scopes": {"a"}},
	}}
	if diff := cmp.Diff(want, reviews.specs); diff != "" {
		t.Errorf("SubjectAccessReview specs (-want +got):\n%s", diff)
	}
}

func TestWebhookAuthorizerCache(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(1000, 0))
	reviews := &fakeSARs{allow: func(s authorizationv1.SubjectAccessReviewSpec) bool {
		return s.ResourceAttributes.Subresource == "stats"
	}}
	w, err := NewWebhookAuthorizer(WebhookAuthzConfig{Reviews: reviews, AuthorizedTTL: 5 * time.Minute, UnauthorizedTTL: 30 * time.Second, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	u := &User{Name: "bob"}
	stats := RequestAttributes(u, "GET", "/stats/summary", "n")[0]
	exec := RequestAttributes(u, "POST", "/exec/ns/p/c", "n")[0]
	other := RequestAttributes(&User{Name: "carol"}, "GET", "/stats/summary", "n")[0]
	steps := []struct {
		name      string
		advance   time.Duration
		attrs     Attributes
		fail      bool
		want      bool
		wantErr   bool
		wantCalls int
	}{
		{name: "allowed", attrs: stats, want: true, wantCalls: 1},
		{name: "allowed is cached", advance: 4 * time.Minute, attrs: stats, want: true, wantCalls: 1},
		{name: "another user is another key", attrs: other, want: true, wantCalls: 2},
		{name: "denied", attrs: exec, wantCalls: 3},
		{name: "denied is cached", advance: 29 * time.Second, attrs: exec, wantCalls: 3},
		{name: "denied expires after 30s", advance: time.Second, attrs: exec, wantCalls: 4},
		{name: "allowed expires after 5m", advance: 31 * time.Second, attrs: stats, want: true, wantCalls: 5},
		{name: "errors are not cached", advance: time.Minute, attrs: exec, fail: true, wantErr: true, wantCalls: 6},
		{name: "so the next asks again", attrs: exec, wantCalls: 7},
	}
	for _, s := range steps {
		clk.SetTime(clk.Now().Add(s.advance))
		reviews.fail = s.fail
		got, _, err := w.Authorize(context.Background(), s.attrs)
		if got != s.want || (err != nil) != s.wantErr || len(reviews.specs) != s.wantCalls {
			t.Fatalf("%s: allowed=%v err=%v calls=%d, want allowed=%v err=%v calls=%d", s.name, got, err, len(reviews.specs), s.want, s.wantErr, s.wantCalls)
		}
	}
}
