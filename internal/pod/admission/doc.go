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
// (SysctlForbidden), which the caller runs apart from Admit, right after
// the eviction check, as upstream orders them.
//
// Not done here, unlike upstream's other admit handlers: eviction pressure,
// AppArmor, node shutdown, the resource managers (the CPU
// manager's admission is internal/node/cpumanager's, which internal/app/agent runs
// before these checks, as upstream; memory, topology and devices are not
// done), the node's declared features (internal/pod/declaredfeatures, which
// internal/app/agent runs last, as upstream) and the preemption of
// lower-priority pods for a critical pod that does not fit.
package admission
