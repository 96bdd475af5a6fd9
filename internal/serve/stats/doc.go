// Package stats owns berth's resource statistics without cAdvisor: the
// kubelet's /stats/summary endpoint (k8s.io/kubelet stats/v1alpha1
// Summary), the /metrics/resource endpoint metrics-server scrapes and
// /metrics/cadvisor with cAdvisor's metric names and the kubelet's labels.
//
//	parse.go        pure parsers of /proc and cgroup (v1 and v2) files, table-tested over testdata
//	netdev.go       pure parsers of /proc/<pid>/net/dev (cAdvisor's ignored devices) and /proc/cpuinfo
//	node.go         the node's figures: root cgroup CPU and memory, swap, filesystems (statfs), rlimit, network, machine
//	syscontainers.go the system containers (kubelet, pods, runtime, misc) from their cgroups
//	pods.go         pure assembly of pod and container stats from CRI answers, volumes and netns networks
//	netns.go        pod networks from the sandbox process's netns (pid from PodSandboxStatus, cached)
//	du.go           disk usage walks that never follow a symlink (openat2 RESOLVE_BENEATH|NO_SYMLINKS),
//	                iterative with at most maxOpenDirs+1 directories open, run in bounded steps
//	volumes.go      the volume cache: every pod volume measured once per volumeStatsAggPeriod; a
//	                volume on its own filesystem (tmpfs) by statfs, another by a walk that counts at
//	                most maxWalkInodes a pass and goes on in the next (until done, at least its count
//	                or the last complete total is published: never a partial count as the total)
//	plugins.go      the claim and CSI volumes the volume manager lists, measured as upstream's plugins:
//	                a local PV by statfs, a CSI volume by its driver's NodeGetVolumeStats (bounded per
//	                call; a driver that times out is not asked again in that pass), with their pvcRef
//	sampler.go      the owner goroutine that samples cumulative CPU every 10 s for usageNanoCores
//	provider.go     Provider: Config, New, Summary, Run
//	handler.go      GET /stats/summary
//	resource.go     GET /metrics/resource: upstream's resource metrics, from the summary (pinned to upstream)
//	cadvisor.go     GET /metrics/cadvisor: the rows and metrics cAdvisor names (pinned to cAdvisor's source)
//	cadvisor_emit.go the rows (machine root, pods, containers) and their samples
//
// Cost: a summary is one pass over the CRI's sandboxes, containers and
// stats, a bounded walk of each running container's log directory and a
// read of each pod's net/dev; volume usage comes from the cache.
// BenchmarkSummary reports the cost per pod.
package stats
