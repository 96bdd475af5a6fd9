package server

import (
	"errors"
	"fmt"
	"net/http"

	"k8s.io/klog/v2"
)

// Auth is what the kubelet API filter needs: who is calling, and may they.
type Auth struct {
	Authn interface {
		Authenticate(r *http.Request) (*User, error)
	}
	Authz    Authorizer
	NodeName string
}

// withAuth wraps next with authentication and authorization, answering as
// upstream: 401 "Unauthorized" when the caller is not identified, 403
// "Forbidden (user=..., verb=..., resource=nodes, subresource(s)=[...])"
// when no check allows the request, 500 when authorization fails.
func withAuth(auth Auth, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		logger := klog.FromContext(r.Context())
		u, err := auth.Authn.Authenticate(r)
		if err != nil {
			if !errors.Is(err, errNoCredentials) {
				logger.Error(err, "Unable to authenticate the request", "path", r.URL.Path)
			}
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		checks := RequestAttributes(u, r.Method, r.URL.Path, auth.NodeName)
		subresources := make([]string, 0, len(checks))
		for _, a := range checks {
			subresources = append(subresources, a.Subresource)
			allowed, _, err := auth.Authz.Authorize(r.Context(), a)
			if err != nil {
				logger.Error(err, "Authorization error", "user", u.Name, "verb", a.Verb, "resource", a.Resource, "subresource", a.Subresource)
				http.Error(w, fmt.Sprintf("Authorization error (user=%s, verb=%s, resource=%s, subresource=%s)",
					u.Name, a.Verb, a.Resource, a.Subresource), http.StatusInternalServerError)
				return
			}
			if allowed {
				next.ServeHTTP(w, r)
				return
			}
		}
		verb := ""
		if len(checks) > 0 {
			verb = checks[0].Verb
		}
		logger.V(2).Info("Forbidden", "user", u.Name, "verb", verb, "resource", "nodes", "subresources", subresources)
		http.Error(w, fmt.Sprintf("Forbidden (user=%s, verb=%s, resource=nodes, subresource(s)=%v)",
			u.Name, verb, subresources), http.StatusForbidden)
	})
}
