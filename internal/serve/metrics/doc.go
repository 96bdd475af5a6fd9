// Package metrics owns berth's Prometheus metrics: one registry per agent
// (never the default registerer) holding the kubelet metrics upstream
// exposes on /metrics, under upstream's names, labels, help and buckets.
//
//	metrics.go   the registry, the node name gauge, the Go and process collectors, the /metrics handler
//	runtime.go   kubelet_runtime_operations_* and started pods/containers, fed by the CRI interceptor (ObserveCRI)
//	pleg.go      kubelet_pleg_* and the running pods/containers gauges, fed by the PLEG (ObserveRelist of
//	             a Relist, the figures they need, which the agent copies from pleg.RelistStats)
//	startup.go   kubelet_pod_start_sli_duration_seconds and friends: the pod startup latency tracker;
//	             Forget drops a pod that is gone (internal/pod/podgone); HeldPods lets housekeeping
//	             find the pods no worker's end covers: the mirror pods, once the API has them no more
//	certificate.go the certificate managers' renewal errors, rotation ages and TTLs (internal/cluster/certificate)
//	eviction.go  kubelet_evictions and kubelet_eviction_stats_age_seconds, fed by the eviction manager
//	userns.go    kubelet_started_user_namespaced_pods_total and _errors_total, fed by kuberuntime's Apply
//	stages.go    the stages of a pod's start: upstream's pod worker start, run_podsandbox and pod status
//	             sync latencies, berth_pod_start_stage_duration_seconds for the stages upstream does not
//	             measure, and one "Pod start stages" log line per started pod with the moments (test/bench reads it)
//	pullrecords.go kubelet_imagemanager_*: the image pull records' checks and sizes (internal/images/pullrecords)
//	volumestats.go kubelet_volume_stats_*: the claims' volumes of the pods' stats, listed on each
//	             scrape (HandlerWithVolumeStats), as upstream's volume stats collector
//	startlimit.go berth_pod_start_limit: how many new pods may start at once, fed by kuberuntime's start pace
//	resize.go    the in-place pod resize metrics: requested, infeasible, pending, in-progress and deferred
//	             resizes, fed by the allocation manager, and the actuation's duration, fed by kuberuntime
//
// Components never import this package's state: they take small observer
// functions in their Config (nil = off), and the agent wires the methods
// of one *Metrics into them. Where an observer takes a value, this package
// declares the type it needs (Relist), so it imports no pod path package.
package metrics
