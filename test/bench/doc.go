// Package bench measures berth side by side with the upstream kubelet on
// one machine, in one run: the same containerd, the same control plane
// (test/cluster), the same scenarios, one kubelet after the other, plus a
// floor measured by a bare CRI client doing the same sandbox and container
// work with the same parallelism. It reports; it asserts nothing.
//
// Files:
//
//	stats.go     distributions: median, p50, p90, p99, max (pure)
//	table.go     the result tables: per configuration, per repeat side by side, heap (pure)
//	measures.go  the figures of the table, and the kubelet-added latency (pure)
//	procstat.go  RSS and CPU time of a process and its children from /proc (parsing is pure)
//	idle.go      the idle-machine check: others' share of the CPU before and during the run
//	stages.go    the per-pod split of create to Running, from the kubelets' log lines (pure)
//	scrape.go    the kubelets' stage metrics from /metrics, means over a burst
//	audit.go     API requests per minute by user, from the audit log (pure)
//	kubelet.go   the shared configuration (node guards alike); starting and stopping a kubelet
//	configs.go   the configurations (shared, defaults) and each kubelet's file in them (pure)
//	plan.go      which bursts, steady states and heap profiles a repeat runs (pure)
//	heap.go      berth's heap profile from its kubelet API; parsing it is pure
//	clean.go     returning containerd to a clean state between runs
//	scenario.go  start to Ready, watches, per-pod times
//	burst.go     pod bursts and deletions
//	burstrun.go  one burst measured: times, stages, peaks, steady state; the heap ladder
//	floor.go     the same pods made directly through the CRI
//	run.go       the whole run: idle check, every configuration, kubelet and scenario, the floor, results
//
// cmd/bench is the command `make bench` runs.
package bench
