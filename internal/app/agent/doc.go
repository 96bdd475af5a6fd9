// Package agent wires berth together: it builds every component from the
// loaded configuration, starts them in order and stops them in reverse,
// within a bounded stop budget and without stopping a pod (group.go). It
// also wires the process's edges: systemd readiness and watchdog
// (systemd.go) and graceful node shutdown (shutdown.go). userns.go builds
// the user namespace manager (the kubelet user's ID range, the pods'
// mappings read back from their directories); memorymanager.go starts the
// memory manager (its checkpoint restored, another policy's refused) and
// admits pods through it (Static policy); the tracer provider
// (internal/platform/tracing, only when tracing is set) is built first, traces the
// CRI client and the pod syncs, and is flushed when berth stops.
// The admit handlers and their order are internal/pod/admission's
// (Handlers, Admitter), which agent.go builds; cpumanager.go
// builds the CPU manager and gives it the active pods and their running
// containers; topology.go builds the topology manager over it (policy not
// none) and admits pods through it. declaredfeatures.go discovers the
// node's declared features once at start (internal/pod/declaredfeatures), for
// the node status and the last admit handler. plugins.go builds the plugin
// manager (internal/platform/pluginmanager) over <root-dir>/plugins_registry,
// with no handlers yet. forget.go registers every
// owner of per-pod state with the route by which that state ends
// (internal/pod/podgone), which the pod workers and housekeeping tell.
package agent
