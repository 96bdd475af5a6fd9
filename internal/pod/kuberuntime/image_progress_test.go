package kuberuntime

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/images/pullprogress"
	"github.com/berthk8s/berth/internal/pod/timeline"
)

// scriptedWatcher gives each watched pull the same readings, synchronously
// from Watch (as if they all came while the pull ran), and notes the
// repositories watched and the stops.
type scriptedWatcher struct {
	readings []pullprogress.Progress
	mu       sync.Mutex
	watched  []string
	stopped  int
}

func (w *scriptedWatcher) Watch(_ context.Context, repository string, _ time.Time, report func(pullprogress.Progress)) func() {
	w.mu.Lock()
	w.watched = append(w.watched, repository)
	w.mu.Unlock()
	for _, p := range w.readings {
		report(p)
	}
	return func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.stopped++
	}
}

// progressEvents notes the progress events' messages, in order.
type progressEvents struct {
	mu   sync.Mutex
	msgs []string
	done int
}

func (p *progressEvents) start(_ *corev1.Pod, container, eventType, reason, msg string) (func(string), func()) {
	add := func(m string) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.msgs = append(p.msgs, container+" "+eventType+" "+reason+" "+m)
	}
	add(msg)
	return add, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.done++
	}
}

// TestPullProgress: a pull's readings go to the image stage of the
// timeline, to the one Pulling event's message after upstream's text, and
// to the metrics (bytes downloaded since the first reading, bytes
// remaining back to zero at the end).
func TestPullProgress(t *testing.T) {
	w := &scriptedWatcher{readings: []pullprogress.Progress{
		{Known: true, Done: 1 << 20, Total: 4 << 20},
		{Known: true, Done: 3 << 20, Total: 4 << 20, BytesPerSecond: 2 << 20},
	}}
	evs := &progressEvents{}
	var rec *timeline.Recorder
	var downloaded, remaining int64
	e := newEnv(t, func(c *Config) {
		var err error
		if rec, err = timeline.New(timeline.Config{Clock: c.Clock}); err != nil {
			t.Fatal(err)
		}
		c.Observe.Stages = rec
		c.Pulls.Watcher, c.Pulls.Events = w, evs.start
		c.Observe.PullProgress = func(d, r int64) { downloaded += d; remaining += r }
	})
	e.fake.AllowPull("nginx:1.27")
	pod := basePod()
	pod.Spec.Containers[0].Image = "nginx:1.27"
	e.sync(pod)
	e.running(pod, "app")

	want := []string{
		`app Normal Pulling Pulling image "nginx:1.27"`,
		`app Normal Pulling Pulling image "nginx:1.27": 1.0 MiB of 4.0 MiB (25%), 0 B/s`,
		`app Normal Pulling Pulling image "nginx:1.27": 3.0 MiB of 4.0 MiB (75%), 2.0 MiB/s`,
	}
	if diff := cmp.Diff(want, evs.msgs); diff != "" {
		t.Errorf("Pulling event messages (-want +got):\n%s", diff)
	}
	if evs.done != 1 || w.stopped != 1 {
		t.Errorf("event ended %d times, watch stopped %d times; want 1 and 1", evs.done, w.stopped)
	}
	if diff := cmp.Diff([]string{"docker.io/library/nginx"}, w.watched); diff != "" {
		t.Errorf("repositories watched (-want +got):\n%s", diff)
	}
	if downloaded != 2<<20 || remaining != 0 {
		t.Errorf("metrics: %d bytes downloaded, %d remaining; want %d and 0", downloaded, remaining, 2<<20)
	}
	for _, ev := range e.events.take() {
		if ev == `Normal Pulling Pulling image "nginx:1.27"` {
			t.Errorf("a plain Pulling event beside the progress one: %q", ev)
		}
	}
	tl, _ := rec.Get("default", "web")
	var got *timeline.Progress
	for _, s := range tl.Stages {
		if s.Name == timeline.StageImage {
			got = s.Progress
		}
	}
	if diff := cmp.Diff(&timeline.Progress{DoneBytes: 3 << 20, TotalBytes: 4 << 20, BytesPerSecond: 2 << 20}, got); diff != "" {
		t.Errorf("image stage's progress (-want +got):\n%s", diff)
	}
}

// TestPullWithoutProgress: without a watcher the Pulling event is the
// plain, upstream one.
func TestPullWithoutProgress(t *testing.T) {
	evs := &progressEvents{}
	e := newEnv(t, func(c *Config) { c.Pulls.Events = evs.start })
	e.fake.AllowPull("nginx:1.27")
	pod := basePod()
	pod.Spec.Containers[0].Image = "nginx:1.27"
	e.sync(pod)
	e.running(pod, "app")
	if len(evs.msgs) != 0 {
		t.Errorf("progress events without a watcher: %q", evs.msgs)
	}
	found := false
	for _, ev := range e.events.take() {
		found = found || ev == `Normal Pulling Pulling image "nginx:1.27"`
	}
	if !found {
		t.Error("no plain Pulling event")
	}
}
