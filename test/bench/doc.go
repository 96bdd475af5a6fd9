// Package bench measures berth side by side with the upstream kubelet on
// one machine, in one run: the same containerd, the same control plane
// (test/cluster), the same scenarios, one kubelet after the other, plus a
// floor measured by a bare CRI client doing the same sandbox and container
// work with the same parallelism. It reports; it asserts nothing.
//
// Files:
//
//	stats.go     distributions: median, p50, p99, max (pure)
//	table.go     the result table (pure)
//	procstat.go  RSS and CPU time of a process from /proc (parsing is pure)
//	audit.go     API requests per minute by user, from the audit log (pure)
//	kubelet.go   starting and stopping berth or the upstream kubelet
//	clean.go     returning containerd to a clean state between runs
//	scenario.go  start to Ready, pod bursts, deletions, steady state
//	floor.go     the same pods made directly through the CRI
//	run.go       the whole run: every scenario for every kubelet, results
//
// cmd/bench is the command `make bench` runs.
package bench
