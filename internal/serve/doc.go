// Package serve is the wing of berth's servers:
//
//	server     the kubelet API on 10250 (authentication, authorization,
//	           the mux), the read-only port and healthz
//	streaming  exec, attach and port-forward
//	logquery   the node log query
//	stats      /stats/summary and /metrics/resource without cAdvisor
//	metrics    the Prometheus metrics under upstream's names
//	podresources the pod resources API on <root-dir>/pod-resources/kubelet.sock
//	podsapi    the Pods API (KEP-4188) on <root-dir>/pods-api/pods-api.sock
//	localgrpc  what those two node-local gRPC servers share: the socket,
//	           the rate limit, serving until the context ends
//
// It may import podkit, platform, config, volumes and pod (archtest.Wings
// holds it); handlers take narrow function types from the wiring.
package serve
