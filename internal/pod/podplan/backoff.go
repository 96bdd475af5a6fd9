package podplan

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// The one back-off algorithm of berth: client-go's flowcontrol.Backoff as
// the kubelet uses it (no jitter), over immutable BackoffEntry values that
// the caller keeps. Two users share it: the CrashLoopBackOff gate below and
// the image pull back-off (internal/pod/kuberuntime, with upstream's image
// pull numbers).
//
//   - Holds: an event at since (a container's exit, the last failed pull)
//     is held back at now while now - since < entry.Delay, unless the entry
//     has expired at since (IsInBackOffSince; since = LastUpdate is
//     IsInBackOffSinceUpdate).
//   - An entry has expired at t when t is more than 2*Max after its last
//     update: what it counted ran (or stayed unused) stably for that long,
//     so its back-off starts over.
//   - Next: after an event at `at`, a missing (zero) or expired entry
//     restarts at Initial; otherwise the delay doubles up to Max.
//     LastUpdate becomes now.
//   - Expired entries are dropped (upstream's periodic Backoff.GC).
//
// The CrashLoopBackOff gate, keyed by container name plus spec hash:
//
//   - A container whose previous instance exited is held back per Holds
//     since previous.FinishedAt.
//   - When such a container is started, its entry advances per Next at
//     previous.FinishedAt; a stale-hash entry counts as missing.
//   - A container's first start (no exited instance) does not touch it.
//   - Entries of containers no longer in the spec, and expired ones, are
//     dropped.

// withDefaults fills zero fields with upstream's defaults. A Max below
// Initial (crashLoopBackOff.maxContainerRestartPeriod under 10 s) lowers
// Initial to it, as upstream's newCrashLoopBackOff.
func (b BackoffPolicy) withDefaults() BackoffPolicy {
	if b.Initial <= 0 {
		b.Initial = DefaultBackoffInitial
	}
	if b.Max <= 0 {
		b.Max = DefaultBackoffMax
	}
	if b.Max < b.Initial {
		b.Initial = b.Max
	}
	return b
}

// Expired reports whether the entry is to be forgotten at t: t is more
// than 2*Max after its last update.
func (b BackoffPolicy) Expired(e BackoffEntry, t time.Time) bool {
	return t.Sub(e.LastUpdate) > 2*b.withDefaults().Max
}

// Holds reports whether the entry still holds back, at now, what happened
// at since. A zero entry holds nothing back.
func (b BackoffPolicy) Holds(e BackoffEntry, since, now time.Time) bool {
	return e.Delay > 0 && !b.Expired(e, since) && now.Sub(since) < e.Delay
}

// Next is the entry after a back-off event at `at`, recorded at now: a
// zero or expired entry restarts at Initial, any other doubles up to Max.
// The Hash is kept.
func (b BackoffPolicy) Next(e BackoffEntry, at, now time.Time) BackoffEntry {
	b = b.withDefaults()
	delay := b.Initial
	if e.Delay > 0 && !b.Expired(e, at) {
		delay = min(2*e.Delay, b.Max)
	}
	return BackoffEntry{Delay: delay, LastUpdate: now, Hash: e.Hash}
}

// collectBackoff copies the caller's entries, dropping those of containers
// no longer in the spec and the expired ones.
func (p *planner) collectBackoff(in map[string]BackoffEntry) map[string]BackoffEntry {
	names := make(map[string]bool, len(p.pod.Spec.InitContainers)+len(p.pod.Spec.Containers))
	for i := range p.pod.Spec.InitContainers {
		names[p.pod.Spec.InitContainers[i].Name] = true
	}
	for i := range p.pod.Spec.Containers {
		names[p.pod.Spec.Containers[i].Name] = true
	}
	out := make(map[string]BackoffEntry, len(in))
	for name, e := range in {
		if !names[name] || p.policy.Expired(e, p.now) {
			continue
		}
		out[name] = e
	}
	return out
}

// admit passes a container about to be started through the backoff gate.
// It returns false, recording a Waiting entry, when the container is held
// back; otherwise it advances the container's entry (if the container ran
// before) and returns true.
func (p *planner) admit(spec *corev1.Container, hash uint64) bool {
	prev := latestExited(p.rt, spec.Name)
	if prev == nil {
		return true
	}
	e, ok := p.backoff[spec.Name]
	if !ok || e.Hash != hash {
		e = BackoffEntry{Hash: hash}
	}
	if p.policy.Holds(e, prev.FinishedAt, p.now) {
		p.waiting[spec.Name] = Waiting{
			Reason:  WaitingReasonCrashLoopBackOff,
			Message: backoffMessage(e.Delay, spec.Name, p.pod),
		}
		return false
	}
	p.backoff[spec.Name] = p.policy.Next(e, prev.FinishedAt, p.now)
	return true
}

// backoffMessage is upstream's CrashLoopBackOff message.
func backoffMessage(delay time.Duration, container string, pod *corev1.Pod) string {
	return fmt.Sprintf("back-off %s restarting failed container=%s pod=%s", delay, container, podRef(pod))
}

// latestExited returns the newest exited instance of the named container in
// any sandbox, or nil.
func latestExited(rt *runtimestate.Pod, name string) *runtimestate.Container {
	for i := range rt.Containers {
		c := &rt.Containers[i]
		if c.Name == name && c.State == runtimestate.ContainerExited {
			return c
		}
	}
	return nil
}
