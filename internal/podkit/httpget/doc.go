// Package httpget builds the GET request of an httpGet action, which HTTP
// probes (internal/pod/prober) and httpGet lifecycle hooks
// (internal/pod/kuberuntime) share, by upstream's rules (pkg/probe/http
// NewRequestForHTTPGetAction, which both of upstream's callers use):
//
//	request.go  NewRequest: scheme, host, port, path and query, headers,
//	            User-Agent and Accept; ResolvePort, upstream's
//	            ResolveContainerPort (TCP probes use it too); UserAgent,
//	            "kube-<purpose>/<major>.<minor>" of the Kubernetes version
//	            it is given: berth's (config.KubernetesVersion), which the
//	            wiring hands the prober and kuberuntime as a value
//
// What differs between the two callers stays with them and is documented
// in the table test: which pod IP is the default host (a hook fails
// without one, a probe does not check), who sends the request and what it
// makes of the answer. The package does no I/O.
package httpget
