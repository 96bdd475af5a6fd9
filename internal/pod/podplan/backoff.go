package podplan

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// The CrashLoopBackOff gate, after client-go's flowcontrol.Backoff as the
// kubelet uses it (no jitter), keyed by container name plus spec hash:
//
//   - A container whose previous instance exited is held back while
//     now - previous.FinishedAt < entry.Delay.
//   - An entry has expired (is ignored) when the previous instance finished
//     more than 2*Max after the entry's last update: the container ran
//     stably for that long, so its backoff starts over.
//   - When such a container is started, its entry advances: a missing,
//     expired or stale-hash entry restarts at Initial; otherwise the delay
//     doubles up to Max. LastUpdate becomes now.
//   - A container's first start (no exited instance) does not touch it.
//   - Entries of containers no longer in the spec, and entries not updated
//     for more than 2*Max (upstream's periodic Backoff.GC), are dropped.

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

// collectBackoff copies the caller's entries, dropping those of containers
// no longer in the spec and those not updated for more than 2*Max.
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
		if !names[name] || p.now.Sub(e.LastUpdate) > 2*p.policy.Max {
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
	valid := ok && e.Hash == hash && prev.FinishedAt.Sub(e.LastUpdate) <= 2*p.policy.Max
	if valid && p.now.Sub(prev.FinishedAt) < e.Delay {
		p.waiting[spec.Name] = Waiting{
			Reason:  WaitingReasonCrashLoopBackOff,
			Message: backoffMessage(e.Delay, spec.Name, p.pod),
		}
		return false
	}
	delay := p.policy.Initial
	if valid {
		delay = min(2*e.Delay, p.policy.Max)
	}
	p.backoff[spec.Name] = BackoffEntry{Delay: delay, LastUpdate: p.now, Hash: hash}
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
