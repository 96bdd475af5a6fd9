// Package server serves berth's HTTP endpoints that exist today: the
// healthz port (GET /healthz) and, when readOnlyPort is set, the upstream
// read-only endpoints GET /healthz and GET /pods. Handlers take narrow
// function types, never berth's components.
package server
