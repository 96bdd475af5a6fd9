// Package eviction owns berth's eviction manager, with upstream's
// semantics (pkg/kubelet/eviction): it watches the node's memory, disk,
// inodes and PIDs, reports MemoryPressure, DiskPressure and PIDPressure,
// refuses pods under pressure, and evicts one pod per pass to relieve it.
//
//	threshold.go  Signal, Threshold, ParseThresholds (evictionHard, evictionSoft,
//	              evictionSoftGracePeriod, evictionMinimumReclaim, allocatable),
//	              WithContainerFs (containerfs thresholds from nodefs or imagefs)
//	observe.go    Observe: signals from a stats summary (internal/serve/stats)
//	decide.go     Decide: thresholds met, grace periods, minimum reclaim,
//	              conditions with evictionPressureTransitionPeriod, what to reclaim
//	rank.go       RankPods: the order pods are evicted in, per signal, with
//	              each pod's figures; the one ranking, which Choose and
//	              the explainer both call
//	local.go      LocalStorageViolation: emptyDir sizeLimit, ephemeral-storage limits
//	choose.go     Choose, LocalStorageEvictions: the pod(s) a pass evicts
//	message.go    upstream's messages and the Evicted reason
//	explain.go    Snapshot (what one pass saw and decided) and Explain: the
//	              eviction explainer /debug/eviction serves (signals,
//	              thresholds and how close they are, conditions, the next
//	              eviction by Choose, the order per signal by RankPods)
//	explaintext.go Explanation.WriteText: the same as plain-text tables
//	admit.go      Admit (critical pods, podutil.IsCritical, always)
//	memcg.go      kernelMemcgNotification: MemcgThreshold (the memory.usage_in_bytes
//	              at which a memory threshold is crossed, upstream's arithmetic),
//	              Notifier, and the manager's re-arming every 10 s
//	memcg_linux.go MemcgNotifier: cgroup v1 threshold notifications (an eventfd
//	              registered through cgroup.event_control); none on cgroup v2,
//	              as upstream
//	manager.go    Manager: the one goroutine (Run) that performs a pass every
//	              monitoring period, and at once when a memory notification
//	              fires: node-level reclaim, the kill, the event; after a
//	              pass that evicted, it waits (30 s at most) for the evicted
//	              pods to be cleaned up before it passes again; every
//	              pass publishes its Snapshot, which Explain reads
//
// Everything but manager.go, the re-arming in memcg.go and memcg_linux.go
// is pure and takes the time as an input. The kill goes through the pod
// workers (Killer); node-level disk reclaim through NodeReclaimer, which
// the image and container GC implement.
package eviction
