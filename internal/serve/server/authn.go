package server

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// Well-known user and group names, as upstream.
const (
	AnonymousUser      = "system:anonymous"
	UnauthenticatedGrp = "system:unauthenticated"
	AuthenticatedGroup = "system:authenticated"
)

// User is an authenticated caller. A plain value; never modified once
// returned.
type User struct {
	Name   string
	UID    string
	Groups []string
	Extra  map[string][]string
}

// TokenAuthenticator resolves a bearer token to a user: ok false with a nil
// error means the token is not valid.
type TokenAuthenticator interface {
	AuthenticateToken(ctx context.Context, token string) (u *User, ok bool, err error)
}

// AuthnConfig configures the authenticator. Every part is optional.
type AuthnConfig struct {
	// ClientCAs returns the CAs that verify client certificates, read
	// for every request (the bundle is reloaded when its file changes);
	// nil disables x509 auth.
	ClientCAs func() *x509.CertPool
	// Tokens authenticates bearer tokens; nil disables token auth.
	Tokens TokenAuthenticator
	// Anonymous lets requests without credentials through as
	// system:anonymous.
	Anonymous bool
}

// Authenticator identifies the caller of a request the way upstream's
// delegating authenticator does: client certificate, then bearer token;
// the first that succeeds wins. Credentials that were presented but are
// invalid are an error (401) even when anonymous access is enabled; a
// request with no credentials at all is anonymous when that is enabled.
// Safe for concurrent use.
type Authenticator struct {
	cfg AuthnConfig
}

// NewAuthenticator returns an authenticator for cfg.
func NewAuthenticator(cfg AuthnConfig) *Authenticator { return &Authenticator{cfg: cfg} }

// errNoCredentials means a request carried nothing any method checks.
var errNoCredentials = errors.New("no credentials")

// Authenticate returns the caller, or an error that means 401. A bearer
// token that authenticates the caller is removed from r's headers.
func (a *Authenticator) Authenticate(r *http.Request) (*User, error) {
	var errs []error
	if a.cfg.ClientCAs != nil {
		u, ok, err := a.authenticateCert(r)
		if ok {
			return withAuthenticated(u), nil
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	if a.cfg.Tokens != nil {
		u, ok, err := a.authenticateToken(r)
		if ok {
			return withAuthenticated(u), nil
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if a.cfg.Anonymous {
		return &User{Name: AnonymousUser, Groups: []string{UnauthenticatedGrp}}, nil
	}
	return nil, errNoCredentials
}

// authenticateCert verifies the client certificate chain against the CA
// pool for client auth: user = CN, groups = O.
func (a *Authenticator) authenticateCert(r *http.Request) (*User, bool, error) {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return nil, false, nil
	}
	certs := r.TLS.PeerCertificates
	roots := a.cfg.ClientCAs()
	if roots == nil {
		// A nil pool would make Verify trust the system's roots.
		return nil, false, errors.New("verify client certificate: no client CA bundle")
	}
	opts := x509.VerifyOptions{
		Roots:         roots,
		Intermediates: x509.NewCertPool(),
		KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	for _, c := range certs[1:] {
		opts.Intermediates.AddCert(c)
	}
	if _, err := certs[0].Verify(opts); err != nil {
		return nil, false, fmt.Errorf("verify client certificate %q: %w", certs[0].Subject.CommonName, err)
	}
	if certs[0].Subject.CommonName == "" {
		return nil, false, errors.New("client certificate has no common name")
	}
	return &User{Name: certs[0].Subject.CommonName, Groups: slices.Clone(certs[0].Subject.Organization)}, true, nil
}

// authenticateToken checks an "Authorization: Bearer <token>" header. On
// success it removes the header, as upstream's bearer token authenticator
// does, so the token goes no further than here: not to a handler, not to
// the runtime's streaming server that exec, attach and port-forward are
// proxied to, and not into the proxy's request logs.
func (a *Authenticator) authenticateToken(r *http.Request) (*User, bool, error) {
	auth := strings.TrimSpace(r.Header.Get("Authorization"))
	if auth == "" {
		return nil, false, nil
	}
	scheme, token, ok := strings.Cut(auth, " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return nil, false, nil
	}
	token = strings.TrimSpace(token)
	if token == "" {
		return nil, false, nil
	}
	u, ok, err := a.cfg.Tokens.AuthenticateToken(r.Context(), token)
	if err != nil {
		return nil, false, fmt.Errorf("authenticate bearer token: %w", err)
	}
	if !ok {
		return nil, false, errors.New("invalid bearer token")
	}
	r.Header.Del("Authorization")
	return u, true, nil
}

// withAuthenticated returns u with the system:authenticated group added,
// as upstream adds it to every authenticated user.
func withAuthenticated(u *User) *User {
	if slices.Contains(u.Groups, AuthenticatedGroup) {
		return u
	}
	c := *u
	c.Groups = append(slices.Clone(u.Groups), AuthenticatedGroup)
	return &c
}
