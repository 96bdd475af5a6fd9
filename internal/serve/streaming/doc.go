// Package streaming serves the kubelet's streaming endpoints: /exec,
// /attach and /portForward, which ask the runtime (CRI Exec, Attach,
// PortForward) for a streaming URL and proxy the upgraded connection to
// it, so SPDY and the WebSocket channel protocols pass through untouched;
// and /run, which runs a command through CRI ExecSync and answers its
// combined output.
//
// It owns resolving a pod and container to the runtime's IDs (server.go),
// decoding the query options (options.go, pure) and classifying errors
// into HTTP status codes. Authentication and authorization happen before
// these handlers.
package streaming
