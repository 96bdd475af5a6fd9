// Package stats owns berth's resource statistics: the kubelet's
// /stats/summary endpoint (k8s.io/kubelet stats/v1alpha1 Summary) and the
// /metrics/resource endpoint metrics-server scrapes.
//
//	parse.go     pure parsers of /proc and cgroup (v1 and v2) files, table-tested over testdata
//	node.go      the node's figures: root cgroup CPU and memory, filesystems (statfs), rlimit
//	pods.go      pure assembly of pod and container stats from CRI answers
//	sampler.go   the owner goroutine that samples cumulative CPU every 10 s for usageNanoCores
//	provider.go  Provider: Config, New, Summary, Run
//	handler.go   GET /stats/summary
//	resource.go  GET /metrics/resource: upstream's resource metrics, from the summary
package stats
