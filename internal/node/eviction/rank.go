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

// Rank returns pods in the order upstream evicts them for the signal:
//   - memory: pods using more than their request first, then lower
//     priority, then larger usage above the request;
//   - disk (bytes or inodes): the same over the disk usage that the
//     signal's filesystem holds;
//   - pids: lower priority, then more processes.
//
// Pods without stats go first, as upstream. dedicatedImageFs says whether
// the image filesystem is apart from the node's (then nodefs measures logs
// and volumes, imagefs the writable layers). The input is not modified.
func Rank(pods []*corev1.Pod, stats PodStats, sig Signal, dedicatedImageFs bool) []*corev1.Pod {
	out := slices.Clone(pods)
	res := signals[sig].resource
	var usage func(*corev1.Pod, *statsapi.PodStats) int64
	switch res {
	case corev1.ResourceMemory:
		usage = func(_ *corev1.Pod, s *statsapi.PodStats) int64 { return memoryUsage(s) }
	case resourcePids:
		slices.SortStableFunc(out, func(a, b *corev1.Pod) int {
			if c := cmp.Compare(corev1helpers.PodPriority(a), corev1helpers.PodPriority(b)); c != 0 {
				return c
			}
			return withStats(stats, a, b, func(sa, sb *statsapi.PodStats) int { return cmp.Compare(processes(sb), processes(sa)) })
		})
		return out
	default:
		m := measuredFs(sig, dedicatedImageFs)
		usage = func(p *corev1.Pod, s *statsapi.PodStats) int64 { return diskUsage(p, s, m, res == resourceInodes) }
	}
	// request is what "exceeds requests" compares with; above is what the
	// usage above the request subtracts: upstream takes ephemeral-storage's
	// request for inodes too there.
	request := func(p *corev1.Pod) int64 {
		q := podutil.PodRequests(p)[res]
		return q.Value()
	}
	above := request
	if res == resourceInodes {
		above = func(p *corev1.Pod) int64 {
			q := podutil.PodRequests(p)[corev1.ResourceEphemeralStorage]
			return q.Value()
		}
	}
	slices.SortStableFunc(out, func(a, b *corev1.Pod) int {
		if c := withStats(stats, a, b, func(sa, sb *statsapi.PodStats) int {
			return cmpTrueFirst(usage(a, sa) > request(a), usage(b, sb) > request(b))
		}); c != 0 {
			return c
		}
		if c := cmp.Compare(corev1helpers.PodPriority(a), corev1helpers.PodPriority(b)); c != 0 {
			return c
		}
		return withStats(stats, a, b, func(sa, sb *statsapi.PodStats) int {
			return cmp.Compare(usage(b, sb)-above(b), usage(a, sa)-above(a))
		})
	})
	return out
}

// withStats compares a and b by f, putting a pod without stats first.
func withStats(stats PodStats, a, b *corev1.Pod, f func(sa, sb *statsapi.PodStats) int) int {
	sa, okA := stats[a.UID]
	sb, okB := stats[b.UID]
	if !okA || !okB {
		return cmpTrueFirst(!okA, !okB)
	}
	return f(sa, sb)
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
