package metrics

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// observedOnWatch handles one sighting of a pod from the sources.
func (t *startupTracker) observedOnWatch(pod *corev1.Pod, static bool, when time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if podutil.IsTerminal(pod.Status.Phase) {
		delete(t.pods, pod.UID)
		return
	}
	st := t.pods[pod.UID]
	if st == nil {
		st = &podStartup{firstSeen: when, fresh: pod.Status.StartTime == nil}
		t.pods[pod.UID] = st
		t.metrics.containersPerPod.Observe(float64(len(pod.Spec.Containers)))
		// Only pods not yet started when berth first sees them count for
		// the SLI, and never unschedulable ones.
		switch {
		case static || t.excluded[pod.UID] || pod.Status.StartTime != nil:
		case unschedulable(pod):
			t.excluded[pod.UID] = true
		default:
			st.sli = true
		}
		return
	}
	if !st.sli || st.sliRecorded || st.running.IsZero() {
		return
	}
	if unschedulable(pod) {
		st.sli = false
		t.excluded[pod.UID] = true
		return
	}
	if !allStarted(&pod.Status) {
		return
	}
	sli, total := startupDurations(pod.CreationTimestamp.Time, when, st.pulls, st.initRuntime)
	t.metrics.startTotal.Observe(total.Seconds())
	if !stateful(pod) {
		t.metrics.startSLI.Observe(sli.Seconds())
		if !pod.Spec.HostNetwork && !t.firstNetworkSeen {
			t.metrics.firstNetworkPod.Set(sli.Seconds())
			t.firstNetworkSeen = true
		}
	}
	st.sliRecorded = true
}

// statusUpdated handles a status berth generated for a pod: the first one
// with every container started marks the pod running, and the first
// Running phase records the pod start duration.
func (t *startupTracker) statusUpdated(uid types.UID, status *corev1.PodStatus) {
	now := t.clock.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	st := t.pods[uid]
	if st == nil {
		return
	}
	if status.Phase == corev1.PodRunning && st.fresh && !st.startRecorded {
		t.metrics.startDuration.Observe(now.Sub(st.firstSeen).Seconds())
		st.startRecorded = true
	}
	if st.running.IsZero() && allStarted(status) {
		st.running = now
		st.initRuntime = initRuntime(status)
		st.stages.containersStarted = lastStarted(status)
	}
}

// imagePulled records one image pull made for a pod.
func (t *startupTracker) imagePulled(uid types.UID, start, end time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if st := t.pods[uid]; st != nil && st.running.IsZero() {
		st.pulls = append(st.pulls, pullSession{start: start, end: end})
	}
}

func (t *startupTracker) held() []types.UID {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]types.UID, 0, len(t.pods)+len(t.excluded))
	for uid := range t.pods {
		out = append(out, uid)
	}
	for uid := range t.excluded {
		if _, ok := t.pods[uid]; !ok {
			out = append(out, uid)
		}
	}
	return out
}

func (t *startupTracker) forget(uid types.UID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.pods, uid)
	delete(t.excluded, uid)
}

// startupDurations returns the pod's startup SLI duration and its total
// startup duration, from its creation to when the watch showed it running:
// the SLI leaves out the time spent pulling images (overlapping pulls
// counted once) and running init containers. It is pure.
func startupDurations(created, observed time.Time, pulls []pullSession, initRuntime time.Duration) (sli, total time.Duration) {
	total = observed.Sub(created)
	return total - pullTime(pulls) - initRuntime, total
}

// pullTime is the union of the pull sessions' intervals. It is pure.
func pullTime(pulls []pullSession) time.Duration {
	sorted := slices.Clone(pulls)
	slices.SortFunc(sorted, func(a, b pullSession) int { return a.start.Compare(b.start) })
	var total time.Duration
	var reached time.Time
	for _, p := range sorted {
		start := p.start
		if start.Before(reached) {
			start = reached
		}
		if p.end.After(start) {
			total += p.end.Sub(start)
			reached = p.end
		}
	}
	return total
}

// allStarted reports whether every container of the status has started
// and runs: upstream's "pod started" for the startup SLI.
func allStarted(status *corev1.PodStatus) bool {
	for _, cs := range status.ContainerStatuses {
		if cs.State.Running == nil || cs.State.Running.StartedAt.IsZero() {
			return false
		}
	}
	return true
}

// initRuntime is how long the pod's init containers ran to completion
// (restartable sidecars never complete and do not count).
func initRuntime(status *corev1.PodStatus) time.Duration {
	var d time.Duration
	for _, cs := range status.InitContainerStatuses {
		if term := cs.State.Terminated; term != nil && !term.StartedAt.IsZero() && term.FinishedAt.After(term.StartedAt.Time) {
			d += term.FinishedAt.Sub(term.StartedAt.Time)
		}
	}
	return d
}

// stateful reports whether the pod mounts a volume other than a secret,
// config map, downward API, emptyDir or projected volume (upstream's
// isStatefulPod): the SLI leaves such pods out.
func stateful(pod *corev1.Pod) bool {
	for _, v := range pod.Spec.Volumes {
		if v.Secret == nil && v.ConfigMap == nil && v.DownwardAPI == nil && v.EmptyDir == nil && v.Projected == nil {
			return true
		}
	}
	return false
}

// unschedulable reports a PodScheduled=False condition.
func unschedulable(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return true
		}
	}
	return false
}
