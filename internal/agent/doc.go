// Package agent wires berth together: it builds every component from the
// loaded configuration, starts them in order and stops them in reverse,
// within a bounded stop budget and without stopping a pod (group.go). It
// also wires the process's edges: systemd readiness and watchdog
// (systemd.go) and graceful node shutdown (shutdown.go).
package agent
