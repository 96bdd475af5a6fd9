// Package podsapi serves the Pods API (KEP-4188,
// k8s.io/kubelet/pkg/apis/pods/v1alpha1; the PodsAPI gate, beta and on in
// v1.37) on <root-dir>/pods-api/pods-api.sock, as upstream v1.37's
// pkg/kubelet/apis/pods: node-local agents read the kubelet's pods, with
// the kubelet's own view of their status, without asking the API server.
// The socket's directory is 0750 and root's, so only root connects.
//
//	server.go   Config, Server, New and Run: the socket, upstream's rate
//	            limit on the unary calls (100 QPS, burst 10)
//	pods.go     ListPods and GetPod: the kubelet's pods (sorted by UID),
//	            each with its latest generated status, or, before there is
//	            one, the API's with the phase Pending when unset and Ready
//	            turned False (upstream's getEffectivePodStatus);
//	            FailedPrecondition "Kubelet is initializing" until every pod
//	            source is ready; NotFound for an unknown UID
//	watch.go    WatchPods and the broadcaster: ADDED for every pod, then
//	            INITIAL_SYNC_COMPLETE, then ADDED, MODIFIED and DELETED as
//	            statuses change and pods finish (Observe, Finished: the
//	            agent tells of them, as upstream's status manager at
//	            SetPodStatus and TerminatePod); Forget ends a pod's record
//	            (the pod-gone route). Bounded as upstream: 1000 events queued,
//	            100 per watcher; a watcher that falls behind is dropped and
//	            its stream ends with ResourceExhausted
//	metrics.go  kubelet_pod_requests_* and kubelet_pod_watch_events_dropped_total
//	            under upstream's names, help and labels, and the interceptors
//	            that count them
package podsapi
