// Package admission decides whether the node may run a pod: the checks the
// upstream kubelet makes before it starts one (pkg/kubelet/lifecycle/predicate.go,
// the scheduler's GeneralPredicates adapted to the kubelet).
//
// Admit is pure: it sees the pod, the node and the pods already admitted,
// and returns the first failure with upstream's reason and message. The
// caller (the sync loop) admits new pods in creation order (SortByCreation),
// each against the pods admitted before it, and for a rejected pod records a
// Warning event with the reason and the message (Eventf(pod, Warning,
// r.Reason, "%s", r.Message)) and sets the status RejectedStatus returns, as
// upstream's HandlePodAdditions and rejectPod do. Mirror pods are never
// admitted themselves: their static pods are. A pod whose termination was
// already requested is not admitted again.
//
// The checks, in upstream's order:
//
//	os.go         PodOSSelectorNodeLabelDoesNotMatch, PodOSNotSupported,
//	              SupplementalGroupsPolicyNotSupported
//	resources.go  OutOfpods, OutOfcpu, OutOfmemory, OutOfephemeral-storage,
//	              OutOf<resource> (hugepages, extended resources), with
//	              podutil.PodRequests for the pod and podutil.HeldRequests
//	              for the pods admitted before it
//	affinity.go   NodeAffinity: nodeSelector and required node affinity
//	admit.go      NodeName
//	ports.go      NodePorts: host port conflicts with admitted pods (their
//	              containers and sidecars)
//	taints.go     TaintToleration: untolerated NoExecute taints (not for
//	              static pods)
//
// sysctls.go holds Sysctls, upstream's sysctl admit handler
// (SysctlForbidden), which Decide runs apart from Admit, right after the
// eviction check, as upstream orders them.
//
// chain.go holds the node's admit handlers in upstream's order
// (Handlers.Decide: eviction, sysctls, node shutdown, the resource
// managers, Admit, the declared features; Handlers.Resize for an in-place
// resize, without the resource managers) and the Admitter, the sync loop's
// Admit: the pods that still count (podworker's IsActive), at their
// allocations, and a rejected pod's status and event; each admission is
// the admitted stage of the pod's start timeline (StageRecorder).
//
// The handlers Decide calls are their owners' (the eviction manager's
// pressure, internal/node/nodeshutdown's state, the topology, CPU and
// memory managers, internal/pod/declaredfeatures). Not done, unlike
// upstream: AppArmor, devices and the preemption of lower-priority pods
// for a critical pod that does not fit.
package admission
