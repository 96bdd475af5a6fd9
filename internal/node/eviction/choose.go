package eviction

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// Eviction is one pod to evict: the grace period its kill gets and the
// message of its status and event.
type Eviction struct {
	Pod         *corev1.Pod
	GracePeriod int64
	Message     string
	// Signal is what drove it: a threshold's signal, or a local storage
	// pseudo-signal (SignalEmptyDirFsLimit...).
	Signal Signal
	// NoDisruptionTarget: the pod's status gets no DisruptionTarget
	// condition (upstream adds none for local storage evictions).
	NoDisruptionTarget bool
}

// LocalStorageEvictions are upstream's localStorageEviction: every
// non-critical pod over a local storage limit, evicted at once.
func LocalStorageEvictions(pods []*corev1.Pod, stats PodStats, dedicatedImageFs bool) []Eviction {
	var out []Eviction
	for _, p := range pods {
		if podutil.IsCritical(p) {
			continue
		}
		if msg, sig := LocalStorageViolation(p, stats[p.UID], dedicatedImageFs); msg != "" {
			out = append(out, Eviction{Pod: p, Message: msg, Signal: sig, NoDisruptionTarget: true})
		}
	}
	return out
}

// ChooseInput is what Choose looks at.
type ChooseInput struct {
	Decision     Decision
	Observations Observations
	Pods         []*corev1.Pod
	Stats        PodStats
	// DedicatedImageFs: the image filesystem is apart from the node's.
	DedicatedImageFs bool
	// MaxPodGracePeriod is evictionMaxPodGracePeriod (soft thresholds).
	MaxPodGracePeriod int64
}

// Choose picks the one pod a pass evicts for d.Reclaim, as upstream: the
// first non-critical pod in RankPods' order, killed at once for a hard
// threshold and with min(evictionMaxPodGracePeriod, its own grace period)
// for a soft one. ok is false when nothing is to be reclaimed or no pod
// can be evicted.
func Choose(in ChooseInput) (Eviction, bool) {
	t := in.Decision.Reclaim
	if t == nil {
		return Eviction{}, false
	}
	for _, r := range RankPods(in.Pods, in.Stats, t.Signal, in.DedicatedImageFs) {
		if r.Critical {
			continue
		}
		p := r.Pod
		var grace int64
		if !t.Hard() {
			grace = in.MaxPodGracePeriod
			if g := p.Spec.TerminationGracePeriodSeconds; g != nil {
				grace = min(grace, *g)
			}
		}
		msg := Message(in.Decision.Resource, p, in.Stats[p.UID], in.Decision.Act, in.Observations)
		return Eviction{Pod: p, GracePeriod: grace, Message: msg, Signal: t.Signal}, true
	}
	return Eviction{}, false
}

// NodeReclaimable reports whether node-level reclaim (container then image
// GC) comes before evicting pods for s, as upstream's
// buildSignalToNodeReclaimFuncs: for every filesystem signal, except the
// nodefs ones when the image filesystem is dedicated (neither GC frees the
// node filesystem then). berth does not split the container filesystem
// from the image filesystem, so the containerfs signals follow imagefs.
func NodeReclaimable(s Signal, dedicatedImageFs bool) bool {
	if signals[s].condition != corev1.NodeDiskPressure {
		return false
	}
	return !dedicatedImageFs || (s != SignalNodeFsAvailable && s != SignalNodeFsInodesFree)
}
