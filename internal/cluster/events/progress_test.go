package events

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	testingclock "k8s.io/utils/clock/testing"
)

// TestProgress follows one progress event through a pull and its retry:
// one object, its message and count patched at most once per
// ProgressInterval with the latest message, the last one written at
// Close, and the retry counted on the same object.
func TestProgress(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	clk := testingclock.NewFakeClock(t0)
	client := fake.NewClientset()
	r, err := New(ctx, Config{Client: client, NodeName: nodeName, QPS: -1, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Shutdown()
	pod := testPod()
	events := func() []corev1.Event {
		l, err := client.CoreV1().Events(pod.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return l.Items
	}
	waitFor := func(what string, cond func(ev corev1.Event) bool) corev1.Event {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			if evs := events(); len(evs) == 1 && cond(evs[0]) {
				return evs[0]
			} else if len(evs) > 1 {
				t.Fatalf("%d events, want one: %+v", len(evs), evs)
			}
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s; events %+v", what, events())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}

	p := r.StartProgress(pod, "app", corev1.EventTypeNormal, "Pulling", `Pulling image "x"`)
	ev := waitFor("the event created", func(ev corev1.Event) bool { return ev.Message == `Pulling image "x"` })
	if ev.Count != 1 || ev.Reason != "Pulling" || ev.InvolvedObject.FieldPath != "spec.containers{app}" || ev.Source.Component != Component {
		t.Fatalf("created event %+v", ev)
	}
	p.Update(`Pulling image "x": 1 of 3`)
	waitFor("the first update", func(ev corev1.Event) bool { return ev.Message == `Pulling image "x": 1 of 3` && ev.Count == 2 })
	// Within the interval, updates are held; the latest wins.
	p.Update(`Pulling image "x": 2 of 3`)
	p.Update(`Pulling image "x": 2.5 of 3`)
	time.Sleep(50 * time.Millisecond)
	if got := events()[0]; got.Count != 2 {
		t.Fatalf("written within the interval: %+v", got)
	}
	step := func() {
		for !clk.HasWaiters() { // the writer waits out the interval
			time.Sleep(time.Millisecond)
		}
		clk.Step(ProgressInterval)
	}
	step()
	waitFor("the held update", func(ev corev1.Event) bool { return ev.Message == `Pulling image "x": 2.5 of 3` && ev.Count == 3 })
	p.Update(`Pulling image "x": 3 of 3`)
	p.Close()
	p.Update(`after close`)
	step()
	waitFor("the last message at Close", func(ev corev1.Event) bool { return ev.Message == `Pulling image "x": 3 of 3` && ev.Count == 4 })

	// The pull retried: the same object, counted, its first message back.
	clk.Step(time.Minute)
	p = r.StartProgress(pod, "app", corev1.EventTypeNormal, "Pulling", `Pulling image "x"`)
	defer p.Close()
	ev = waitFor("the retry counted", func(ev corev1.Event) bool { return ev.Message == `Pulling image "x"` && ev.Count == 5 })
	if !ev.LastTimestamp.Time.Equal(t0.Add(time.Minute + 2*ProgressInterval)) {
		t.Errorf("lastTimestamp %v, want the retry's", ev.LastTimestamp)
	}
}

// TestProgressStandalone: without an API client a progress event is a
// logged event, its updates dropped.
func TestProgressStandalone(t *testing.T) {
	logs := &logLines{}
	r, err := New(context.Background(), Config{NodeName: nodeName, Logger: logs.logger()})
	if err != nil {
		t.Fatal(err)
	}
	p := r.StartProgress(testPod(), "app", corev1.EventTypeNormal, "Pulling", `Pulling image "x"`)
	p.Update("later")
	p.Close()
	if got := logs.all(); !strings.Contains(got, `Pulling image \"x\"`) {
		t.Errorf("log %q does not hold the event", got)
	}
}
