// Package criproxy is a CRI proxy for fault tests: it serves a unix socket,
// forwards every gRPC call on it to the runtime's socket unchanged (any
// service, any method, unary or streaming, byte for byte), and injects
// the faults a test asks for on chosen methods: latency, an error code
// (Unavailable, DeadlineExceeded, ...) or a hang until the fault is
// cleared or the caller gives up. It is upstream's e2e_node criproxy
// pattern, without knowing the CRI's methods: a kubelet pointed at the
// proxy's socket cannot tell it from the runtime until a fault is set.
//
//	proxy.go  Proxy: Start, Inject, Clear, Calls, Stop; the forwarding
//	fault.go  Fault and the matching of a call to the faults set (pure)
package criproxy
