package kuberuntime

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/images/pullprogress"
	"github.com/berthk8s/berth/internal/pod/timeline"
)

// PullWatcher reads an image pull's progress from the runtime while it
// runs (pullprogress.Watcher): report gets each new reading from the
// watch's own goroutine; stop returns once it is no longer called.
// Implementations must be safe for concurrent use.
type PullWatcher interface {
	Watch(ctx context.Context, repository string, since time.Time, report func(pullprogress.Progress)) (stop func())
}

// ProgressEventFunc records an event whose message later changes
// (events.Recorder.StartProgress): about the pod's container, or the pod
// for "". update replaces the message; done ends it, its latest message
// still written. Neither blocks.
type ProgressEventFunc func(pod *corev1.Pod, container, eventType, reason, msg string) (update func(string), done func())

// pullReport is where one pull's readings go: the pod's timeline, its
// Pulling event, the metrics. Its report runs on the watch's goroutine.
type pullReport struct {
	m     *Manager
	pod   *corev1.Pod
	use   imageUse
	first string // the Pulling event's first message, upstream's
	// update and done are the Pulling event's; last is the last reading
	// (the watch's goroutine owns it until stop returns).
	update func(string)
	done   func()
	last   pullprogress.Progress
}

// startPulling records the Pulling event, upstream's message first, and
// returns where the pull's readings go.
func (m *Manager) startPulling(pod *corev1.Pod, use imageUse) *pullReport {
	r := &pullReport{m: m, pod: pod, use: use, first: fmt.Sprintf("Pulling image %q", use.Image)}
	if m.cfg.Pulls.Events == nil || m.cfg.Pulls.Watcher == nil {
		m.eventf(pod, use, corev1.EventTypeNormal, eventPulling, "%s", r.first)
		r.update, r.done = func(string) {}, func() {}
		return r
	}
	r.update, r.done = m.cfg.Pulls.Events(pod, use.Container, corev1.EventTypeNormal, eventPulling, r.first)
	return r
}

// watch reads the pull that starts at since, until the returned stop.
func (r *pullReport) watch(ctx context.Context, since time.Time) (stop func()) {
	if r.m.cfg.Pulls.Watcher == nil {
		return func() {}
	}
	stopWatch := r.m.cfg.Pulls.Watcher.Watch(ctx, lookupRepository(r.use.Image), since, r.report)
	return func() {
		stopWatch()
		// The pull ended: its bytes are no longer remaining.
		if r.last.Known && r.m.cfg.Observe.PullProgress != nil {
			r.m.cfg.Observe.PullProgress(0, -(r.last.Total - r.last.Done))
		}
	}
}

// report takes one reading: into the image stage of the pod's timeline,
// the Pulling event's message ("Pulling image "x": 12.3 MiB of 40.1 MiB
// (30%), 2.1 MiB/s") and the metrics (bytes downloaded, bytes remaining).
func (r *pullReport) report(p pullprogress.Progress) {
	if r.m.cfg.Observe.Stages != nil {
		r.m.cfg.Observe.Stages.Progress(r.pod, timeline.StageImage, r.use.Image,
			timeline.Progress{DoneBytes: p.Done, TotalBytes: p.Total, BytesPerSecond: p.BytesPerSecond})
	}
	r.update(r.first + ": " + p.String())
	if r.m.cfg.Observe.PullProgress != nil {
		downloaded, remaining := p.Done, p.Total-p.Done
		if r.last.Known {
			downloaded -= r.last.Done
			remaining -= r.last.Total - r.last.Done
		} else {
			// What was on the node before the first reading was not
			// downloaded by this pull.
			downloaded = 0
		}
		r.m.cfg.Observe.PullProgress(max(downloaded, 0), remaining)
	}
	r.last = p
}
