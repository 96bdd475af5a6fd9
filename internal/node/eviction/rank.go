package eviction

import (
	"cmp"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// PodStats are the summary's pod stats by pod UID.
type PodStats map[types.UID]*statsapi.PodStats

// PodStatsOf indexes a summary's pods by UID.
func PodStatsOf(s *statsapi.Summary) PodStats {
	out := PodStats{}
	if s == nil {
		return out
	}
	for i := range s.Pods {
		out[types.UID(s.Pods[i].PodRef.UID)] = &s.Pods[i]
	}
	return out
}

// Ranked is one pod's place in the eviction order of a signal and the
// figures that put it there, in the signal's unit (bytes, inodes or
// processes). A plain value.
type Ranked struct {
	Pod *corev1.Pod
	// HasStats is false for a pod the summary has no stats of: it ranks
	// first, as upstream, and its figures are zero.
	HasStats bool
	// ExceedsRequests: Usage is above Request (memory and disk signals).
	ExceedsRequests bool
	Priority        int32
	Usage           int64
	// Request is the pod's request of the signal's resource; none for
	// pids.
	Request int64
	// AboveRequest is the usage above the request that orders pods of the
	// same priority (upstream subtracts the ephemeral-storage request for
	// inodes too); for pids, the process count.
	AboveRequest int64
	// Critical pods are ranked with the others but never evicted
	// (podutil.IsCritical): Choose skips them.
	Critical bool
}

// RankPods returns pods in the order upstream evicts them for the signal,
// with what decided each place. It is the one ranking: Choose evicts the
// first pod of it that is not critical, and the explainer shows it.
//   - memory: pods using more than their request first, then lower
//     priority, then larger usage above the request;
//   - disk (bytes or inodes): the same over the disk usage that the
//     signal's filesystem holds;
//   - pids: lower priority, then more processes.
//
// Pods without stats go first, as upstream (for pids, first among their
// priority). dedicatedImageFs says whether the image filesystem is apart
// from the node's (then nodefs measures logs and volumes, imagefs the
// writable layers). The input is not modified.
func RankPods(pods []*corev1.Pod, stats PodStats, sig Signal, dedicatedImageFs bool) []Ranked {
	out := make([]Ranked, 0, len(pods))
	res := signals[sig].resource
	for _, p := range pods {
		r := Ranked{Pod: p, Priority: corev1helpers.PodPriority(p), Critical: podutil.IsCritical(p)}
		s, ok := stats[p.UID]
		if ok {
			r.HasStats = true
			r.Usage, r.Request, r.AboveRequest = figures(p, s, sig, dedicatedImageFs)
			r.ExceedsRequests = res != resourcePids && r.Usage > r.Request
		}
		out = append(out, r)
	}
	if res == resourcePids {
		slices.SortStableFunc(out, func(a, b Ranked) int {
			if c := cmp.Compare(a.Priority, b.Priority); c != 0 {
				return c
			}
			if c := cmpTrueFirst(!a.HasStats, !b.HasStats); c != 0 {
				return c
			}
			return cmp.Compare(b.AboveRequest, a.AboveRequest)
		})
		return out
	}
	slices.SortStableFunc(out, func(a, b Ranked) int {
		if c := cmpTrueFirst(!a.HasStats, !b.HasStats); c != 0 {
			return c
		}
		if c := cmpTrueFirst(a.ExceedsRequests, b.ExceedsRequests); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Priority, b.Priority); c != 0 {
			return c
		}
		return cmp.Compare(b.AboveRequest, a.AboveRequest)
	})
	return out
}

// figures are a pod's usage of the signal's resource, its request of it,
// and the usage above the request RankPods orders by: for inodes, upstream
// compares the usage with the inodes request but subtracts the
// ephemeral-storage request; for pids, the process count and no request.
func figures(p *corev1.Pod, s *statsapi.PodStats, sig Signal, dedicatedImageFs bool) (usage, request, above int64) {
	res := signals[sig].resource
	switch res {
	case resourcePids:
		n := processes(s)
		return n, 0, n
	case corev1.ResourceMemory:
		usage = memoryUsage(s)
	default:
		usage = diskUsage(p, s, measuredFs(sig, dedicatedImageFs), res == resourceInodes)
	}
	reqs := podutil.PodRequests(p)
	q := reqs[res]
	request = q.Value()
	sub := request
	if res == resourceInodes {
		e := reqs[corev1.ResourceEphemeralStorage]
		sub = e.Value()
	}
	return usage, request, usage - sub
}

func cmpTrueFirst(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return -1
	}
	return 1
}

func memoryUsage(s *statsapi.PodStats) int64 {
	if s.Memory == nil || s.Memory.WorkingSetBytes == nil {
		return 0
	}
	return int64(*s.Memory.WorkingSetBytes)
}

func processes(s *statsapi.PodStats) int64 {
	if s.ProcessStats == nil || s.ProcessStats.ProcessCount == nil {
		return 0
	}
	return int64(*s.ProcessStats.ProcessCount)
}

// fsParts are what a filesystem signal measures of a pod: its containers'
// writable layers (root), their logs, and its local volumes.
type fsParts struct{ root, logs, volumes bool }

// measuredFs is upstream's buildSignalToRankFunc choice of fsStatsType.
func measuredFs(sig Signal, dedicatedImageFs bool) fsParts {
	if !dedicatedImageFs {
		return fsParts{root: true, logs: true, volumes: true}
	}
	switch sig {
	case SignalImageFsAvailable, SignalImageFsInodesFree, SignalContainerFsAvailable, SignalContainerFsInodesFree:
		return fsParts{root: true}
	}
	return fsParts{logs: true, volumes: true}
}

// diskUsage sums the measured parts of a pod's disk usage, in bytes or
// inodes (upstream's podDiskUsage); volumes are the pod's local ones
// (hostPath, gitRepo, emptyDir on disk, configMap, secret, downwardAPI,
// projected).
func diskUsage(pod *corev1.Pod, s *statsapi.PodStats, m fsParts, inodes bool) int64 {
	var sum uint64
	add := func(fs *statsapi.FsStats) {
		if fs == nil {
			return
		}
		if inodes && fs.InodesUsed != nil {
			sum += *fs.InodesUsed
		} else if !inodes && fs.UsedBytes != nil {
			sum += *fs.UsedBytes
		}
	}
	for i := range s.Containers {
		if m.root {
			add(s.Containers[i].Rootfs)
		}
		if m.logs {
			add(s.Containers[i].Logs)
		}
	}
	if m.volumes {
		local := localVolumes(pod)
		for i := range s.VolumeStats {
			if local[s.VolumeStats[i].Name] {
				add(&s.VolumeStats[i].FsStats)
			}
		}
	}
	return int64(sum)
}

// localVolumes are upstream's localVolumeNames: volumes on the node's disk.
func localVolumes(pod *corev1.Pod) map[string]bool {
	out := map[string]bool{}
	for _, v := range pod.Spec.Volumes {
		if v.HostPath != nil || v.GitRepo != nil || (v.EmptyDir != nil && v.EmptyDir.Medium == corev1.StorageMediumDefault) ||
			v.ConfigMap != nil || v.Secret != nil || v.DownwardAPI != nil || v.Projected != nil {
			out[v.Name] = true
		}
	}
	return out
}

// quantity formats bytes as upstream's messages do (BinarySI).
func quantity(v int64) *resource.Quantity { return resource.NewQuantity(v, resource.BinarySI) }
