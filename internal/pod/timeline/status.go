package timeline

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// ObserveStatus reads a status berth generated for the pod: its init
// containers' runs (by the runtime's clock), its containers' first
// startup and readiness probe successes, and the first phase Running. A
// pod with no record yet (not admitted since berth started) is skipped.
func (r *Recorder) ObserveStatus(uid types.UID, status *corev1.PodStatus) {
	if r == nil || status == nil {
		return
	}
	now := r.clock.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.pods[uid]
	if p == nil {
		return
	}
	spec := &p.pod.Spec
	for i := range status.InitContainerStatuses {
		cs := &status.InitContainerStatuses[i]
		if c := containerIn(spec.InitContainers, cs.Name); c != nil && !podutil.IsSidecar(c) {
			r.initRun(p, cs)
		}
	}
	for i := range status.ContainerStatuses {
		cs := &status.ContainerStatuses[i]
		c := containerIn(spec.Containers, cs.Name)
		if c == nil || cs.State.Running == nil {
			continue
		}
		started := cs.State.Running.StartedAt.Time
		if c.StartupProbe != nil {
			r.probe(p, cs.Name+" startup", started, now, cs.Started != nil && *cs.Started)
		}
		if c.ReadinessProbe != nil {
			r.probe(p, cs.Name+" readiness", started, now, cs.Ready)
		}
	}
	if status.Phase == corev1.PodRunning && p.running.IsZero() {
		p.running = now
	}
}

// initRun records an init container's run: running from its start,
// ended at its exit. r.mu is held.
func (r *Recorder) initRun(p *podTimeline, cs *corev1.ContainerStatus) {
	var (
		start, end time.Time
		err        error
	)
	switch {
	case cs.State.Running != nil:
		start = cs.State.Running.StartedAt.Time
	case cs.State.Terminated != nil:
		t := cs.State.Terminated
		start, end = t.StartedAt.Time, t.FinishedAt.Time
		if t.ExitCode != 0 {
			err = fmt.Errorf("exit code %d", t.ExitCode)
			if t.Reason != "" {
				err = fmt.Errorf("exit code %d: %s", t.ExitCode, t.Reason)
			}
		}
	default:
		return
	}
	if cs.ContainerID == "" || start.IsZero() {
		return
	}
	run, ok := p.inits[cs.Name]
	if !ok || run.id != cs.ContainerID { // its first run, or a new instance
		run = initRun{id: cs.ContainerID, seq: r.add(p, Stage{Name: StageInitContainer, Target: cs.Name, Start: start, Outcome: OutcomeRunning})}
		p.inits[cs.Name] = run
	}
	if e := p.find(run.seq); e != nil && !end.IsZero() {
		e.finish(end, 0, "", err) // once: an ended entry stays as it ended
	}
}

// probe records a container's probe of kind ("<container> startup"):
// running from the container's start until the first status that shows
// it succeeded (ok). r.mu is held.
func (r *Recorder) probe(p *podTimeline, target string, started, now time.Time, ok bool) {
	key := "probe " + target
	seq, seen := p.open[key]
	if seen && seq == 0 {
		return // succeeded once: the first success is the stage
	}
	if !seen {
		seq = r.add(p, Stage{Name: StageProbe, Target: target, Start: started, Outcome: OutcomeRunning})
		p.open[key] = seq
	}
	if !ok {
		return
	}
	if e := p.find(seq); e != nil {
		e.finish(now, 0, "", nil)
	}
	p.open[key] = 0
}

// StatusWritten records a status written to the API server at at: the
// first with phase Running ends the status-written stage, begun when a
// generated status first showed it.
func (r *Recorder) StatusWritten(pod *corev1.Pod, status *corev1.PodStatus, at time.Time) {
	if r == nil || pod == nil || status == nil || status.Phase != corev1.PodRunning {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.pods[pod.UID]
	if p == nil || p.written {
		return
	}
	p.written = true
	start := p.running
	if start.IsZero() || start.After(at) {
		start = at
	}
	seq := r.add(p, Stage{Name: StageStatusWritten, Start: start, Outcome: OutcomeRunning})
	p.find(seq).finish(at, 0, "", nil)
}

func containerIn(cs []corev1.Container, name string) *corev1.Container {
	for i := range cs {
		if cs[i].Name == name {
			return &cs[i]
		}
	}
	return nil
}
