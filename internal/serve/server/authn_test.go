package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

// fakeTokens maps tokens to users; unknown tokens are invalid.
type fakeTokens map[string]*User

func (f fakeTokens) AuthenticateToken(_ context.Context, token string) (*User, bool, error) {
	if token == "broken" {
		return nil, false, errors.New("webhook down")
	}
	u, ok := f[token]
	return u, ok, nil
}

func TestAuthenticate(t *testing.T) {
	ca, other := newTestCA(t), newTestCA(t)
	client := ca.issue(t, "kube-apiserver-kubelet-client", []string{"system:masters"}, x509.ExtKeyUsageClientAuth)
	serverOnly := ca.issue(t, "server", nil, x509.ExtKeyUsageServerAuth)
	foreign := other.issue(t, "mallory", nil, x509.ExtKeyUsageClientAuth)
	tokens := fakeTokens{"good": {Name: "system:serviceaccount:default:reader", UID: "u1", Groups: []string{"system:serviceaccounts"}}}
	anon := &User{Name: AnonymousUser, Groups: []string{UnauthenticatedGrp}}
	pool := func() *x509.CertPool { return ca.pool }

	tests := []struct {
		name      string
		cfg       AuthnConfig
		cert      *x509.Certificate
		authz     string
		want      *User
		wantError bool
		// wantAuthz is the Authorization header left on the request:
		// a token that authenticated the caller is removed.
		wantAuthz string
	}{
		{name: "client cert", cfg: AuthnConfig{ClientCAs: pool}, cert: client,
			want: &User{Name: "kube-apiserver-kubelet-client", Groups: []string{"system:masters", AuthenticatedGroup}}},
		{name: "cert from another CA", cfg: AuthnConfig{ClientCAs: pool, Anonymous: true}, cert: foreign, wantError: true},
		{name: "server-only cert", cfg: AuthnConfig{ClientCAs: pool}, cert: serverOnly, wantError: true},
		{name: "cert ignored without CA", cfg: AuthnConfig{Anonymous: true}, cert: foreign, want: anon},
		{name: "bearer token", cfg: AuthnConfig{Tokens: tokens}, authz: "Bearer good",
			want: &User{Name: "system:serviceaccount:default:reader", UID: "u1", Groups: []string{"system:serviceaccounts", AuthenticatedGroup}}},
		{name: "bearer scheme is case-insensitive", cfg: AuthnConfig{Tokens: tokens}, authz: "bearer good",
			want: &User{Name: "system:serviceaccount:default:reader", UID: "u1", Groups: []string{"system:serviceaccounts", AuthenticatedGroup}}},
		{name: "invalid token fails even with anonymous", cfg: AuthnConfig{Tokens: tokens, Anonymous: true}, authz: "Bearer bad", wantError: true,
			wantAuthz: "Bearer bad"},
		{name: "token error", cfg: AuthnConfig{Tokens: tokens}, authz: "Bearer broken", wantError: true, wantAuthz: "Bearer broken"},
		{name: "bad cert but good token", cfg: AuthnConfig{ClientCAs: pool, Tokens: tokens}, cert: foreign, authz: "Bearer good",
			want: &User{Name: "system:serviceaccount:default:reader", UID: "u1", Groups: []string{"system:serviceaccounts", AuthenticatedGroup}}},
		{name: "client cert wins, the token authenticator does not run", cfg: AuthnConfig{ClientCAs: pool, Tokens: tokens}, cert: client, authz: "Bearer good",
			want: &User{Name: "kube-apiserver-kubelet-client", Groups: []string{"system:masters", AuthenticatedGroup}}, wantAuthz: "Bearer good"},
		{name: "basic auth is no credential", cfg: AuthnConfig{Tokens: tokens, Anonymous: true}, authz: "Basic Zm9vOmJhcg==", want: anon,
			wantAuthz: "Basic Zm9vOmJhcg=="},
		{name: "token ignored without webhook", cfg: AuthnConfig{Anonymous: true}, authz: "Bearer bad", want: anon, wantAuthz: "Bearer bad"},
		{name: "no CA bundle at the moment trusts nobody", cfg: AuthnConfig{ClientCAs: func() *x509.CertPool { return nil }, Anonymous: true},
			cert: client, wantError: true},
		{name: "anonymous", cfg: AuthnConfig{ClientCAs: pool, Tokens: tokens, Anonymous: true}, want: anon},
		{name: "no credentials, anonymous off", cfg: AuthnConfig{ClientCAs: pool, Tokens: tokens}, wantError: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/pods", nil)
			if tc.cert != nil {
				r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{tc.cert}}
			}
			if tc.authz != "" {
				r.Header.Set("Authorization", tc.authz)
			}
			got, err := NewAuthenticator(tc.cfg).Authenticate(r)
			if (err != nil) != tc.wantError {
				t.Fatalf("err = %v, want error %v", err, tc.wantError)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("user (-want +got):\n%s", diff)
			}
			if got := r.Header.Get("Authorization"); got != tc.wantAuthz {
				t.Errorf("Authorization header after authentication = %q, want %q", got, tc.wantAuthz)
			}
		})
	}
}

// TestTokenDoesNotReachHandler sends a bearer token through the kubelet API
// filter: the handler behind it (exec, attach and port-forward proxy the
// request on to the runtime) must not see the token.
func TestTokenDoesNotReachHandler(t *testing.T) {
	var seen []string
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = r.Header.Values("Authorization")
	})
	auth := Auth{
		Authn:    NewAuthenticator(AuthnConfig{Tokens: fakeTokens{"good": {Name: "admin"}}}),
		Authz:    AlwaysAllow{},
		NodeName: "node-1",
	}
	r := httptest.NewRequest(http.MethodPost, "/exec/default/web/app?command=ls", nil)
	r.Header.Set("Authorization", "Bearer good")
	rec := httptest.NewRecorder()
	withAuth(auth, next).ServeHTTP(rec, r)
	if rec.Code != http.StatusOK {
		t.Fatalf("code %d: %s", rec.Code, rec.Body)
	}
	if len(seen) != 0 {
		t.Errorf("handler saw Authorization %q, want none", seen)
	}
}

// fakeTokenReviews answers TokenReviews from a table and counts calls.
type fakeTokenReviews struct {
	mu     sync.Mutex
	calls  int
	users  map[string]authenticationv1.UserInfo
	errors map[string]string
	fail   bool
}

func (f *fakeTokenReviews) Create(_ context.Context, r *authenticationv1.TokenReview, _ metav1.CreateOptions) (*authenticationv1.TokenReview, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.fail {
		return nil, errors.New("connection refused")
	}
	out := r.DeepCopy()
	if u, ok := f.users[r.Spec.Token]; ok {
		out.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: u}
	} else {
		out.Status.Error = f.errors[r.Spec.Token]
	}
	return out, nil
}

func TestWebhookTokenCache(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(1000, 0))
	reviews := &fakeTokenReviews{
		users: map[string]authenticationv1.UserInfo{"good": {Username: "sa", UID: "u", Groups: []string{"g"},
			Extra: map[string]authenticationv1.ExtraValue{"k": {"v"}}}},
		errors: map[string]string{"expired": "token expired"},
	}
	a, err := NewWebhookTokenAuthenticator(reviews, 2*time.Minute, clk)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	type step struct {
		name      string
		advance   time.Duration
		token     string
		fail      bool
		wantOK    bool
		wantErr   bool
		wantCalls int
	}
	steps := []step{
		{name: "first valid review", token: "good", wantOK: true, wantCalls: 1},
		{name: "valid is cached", advance: time.Minute, token: "good", wantOK: true, wantCalls: 1},
		{name: "invalid review", token: "bad", wantCalls: 2},
		{name: "invalid is cached", advance: 30 * time.Second, token: "bad", wantCalls: 2},
		{name: "valid expires after the TTL", advance: 31 * time.Second, token: "good", wantOK: true, wantCalls: 3},
		{name: "invalid expires after the TTL", advance: 90 * time.Second, token: "bad", wantCalls: 4},
		{name: "a review error is not cached", token: "expired", wantErr: true, wantCalls: 5},
		{name: "so it is asked again", token: "expired", wantErr: true, wantCalls: 6},
		{name: "a failed call is not cached", token: "new", fail: true, wantErr: true, wantCalls: 7},
		{name: "and is retried", token: "new", wantCalls: 8},
	}
	for _, s := range steps {
		clk.SetTime(clk.Now().Add(s.advance))
		reviews.fail = s.fail
		u, ok, err := a.AuthenticateToken(ctx, s.token)
		if ok != s.wantOK || (err != nil) != s.wantErr || reviews.calls != s.wantCalls {
			t.Fatalf("%s: ok=%v err=%v calls=%d, want ok=%v err=%v calls=%d", s.name, ok, err, reviews.calls, s.wantOK, s.wantErr, s.wantCalls)
		}
		if ok {
			want := &User{Name: "sa", UID: "u", Groups: []string{"g"}, Extra: map[string][]string{"k": {"v"}}}
			if diff := cmp.Diff(want, u); diff != "" {
				t.Fatalf("%s: user (-want +got):\n%s", s.name, diff)
			}
		}
	}
}
