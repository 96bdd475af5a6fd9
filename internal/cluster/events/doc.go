// Package events records Kubernetes events about pods, their containers,
// claims and the node, the way the upstream kubelet does
// (cmd/kubelet/app/server.go makeEventRecorder).
//
// Every event is written to berth's log. With an API client it is also sent
// to the API server through client-go's event broadcaster
// (k8s.io/client-go/tools/record): one goroutine of the broadcaster's own
// drains a bounded queue, its correlator aggregates repeated events and
// filters spam per object, and a token bucket (Config.QPS, Config.Burst)
// bounds the writes, as upstream's event client does with eventRecordQPS and
// eventBurst. Events are best effort: when the queue is full they are
// dropped, and a write the API server rejects is not retried.
//
// The event source is component "kubelet" and host the node name, so that
// kubectl describe shows "kubelet" in its From column, as for the upstream
// kubelet.
//
// Static pods: events about a static pod are recorded against the static pod
// (its UID is the config hash), not against its mirror pod, exactly as
// upstream does. kubectl describe on the mirror pod finds them anyway: it
// searches events by the UID in the mirror pod's kubernetes.io/config.mirror
// annotation (kubernetes/kubernetes#74156).
//
//	recorder.go   Config, New, Recorder, Eventf, ContainerEventf, NodeEventf, Shutdown
//	refs.go       object references: pod, container field path, node
//	claim.go      ClaimEventf: events about PersistentVolumeClaims
//	sink.go       the rate-limited sink between the broadcaster and the API
//	progress.go   StartProgress: one event whose message a long operation
//	              (an image pull) updates, its own writes beside the
//	              broadcaster's, sharing its token bucket
package events
