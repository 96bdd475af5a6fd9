// Package localgrpc is what berth's node-local gRPC servers (the pod
// resources API, internal/serve/podresources, and the Pods API,
// internal/serve/podsapi) share, as upstream's kubelet shares
// k8s.io/cri-client's CreateListener and pkg/kubelet/apis/grpc:
//
//	listen.go     Listen: the unix socket as upstream's CreateListener makes
//	              it (the old socket unlinked, the directory made 0750, the
//	              socket bound under a temporary name and renamed into place)
//	ratelimit.go  RateLimit: upstream's unary rate limit interceptor and its
//	              error (ResourceExhausted "rejected by rate limit"), on an
//	              injected clock
//	serve.go      Serve: runs a grpc.Server on a listener until the context
//	              ends, then stops it within a bound
package localgrpc
