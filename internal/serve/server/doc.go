// Package server owns berth's HTTP endpoints: the kubelet API on port 10250
// (TLS, authentication, authorization and the mux every kubelet API handler
// is mounted on), the read-only port and the healthz port.
//
// Files: server.go builds the http.Server of all three, with upstream's
// idle, read and write timeouts and a header timeout; tls.go builds the serving TLS configuration (and the self-signed
// certificate); authn.go and tokencache.go identify the caller (x509 client
// certificates, bearer tokens through TokenReview, anonymous); attributes.go
// maps a request to the authorization checks upstream makes; authz.go decides
// them (AlwaysAllow or SubjectAccessReview with its cache); filter.go answers
// 401/403; mux.go registers the endpoints; handlers.go, syslogs.go,
// debug.go, eviction.go (the eviction explainer, /debug/eviction) and
// timeline.go (a pod's start timeline, /pods/{namespace}/{pod}/timeline,
// as JSON or an HTML page) serve the endpoints this package implements
// itself. Handlers take narrow
// function types, never berth's components.
package server
