package podsource

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2/ktesting"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// waitTimeout bounds every wait on a channel; nothing asserts on timing.
const waitTimeout = 30 * time.Second

func recvUpdate(t *testing.T, ch <-chan Update) Update {
	t.Helper()
	select {
	case u := <-ch:
		return u
	case <-time.After(waitTimeout):
		t.Fatal("no update arrived")
		return Update{}
	}
}

func send[T any](t *testing.T, ch chan<- T, v T) {
	t.Helper()
	select {
	case ch <- v:
	case <-time.After(waitTimeout):
		t.Fatal("merger did not take the input")
	}
}

func startMerger(t *testing.T, sources ...string) *Merger {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	m, err := NewMerger(MergerConfig{Sources: sources, Clock: clocktesting.NewFakeClock(testNow)})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() { done <- m.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return m
}

func TestMergerThroughChannels(t *testing.T) {
	m := startMerger(t, podutil.FileSource, podutil.HTTPSource)
	if m.SourcesReady() {
		t.Fatal("ready before any snapshot")
	}
	sent := testPod("a")
	send(t, m.Snapshots(), Snapshot{Source: podutil.FileSource, Pods: []*corev1.Pod{sent}})
	u := recvUpdate(t, m.Updates())
	if diff := cmp.Diff([]string{"ADD:a"}, summarize([]Update{u})); diff != "" {
		t.Fatalf("first update (-want +got):\n%s", diff)
	}
	if u.Source != podutil.FileSource {
		t.Errorf("source = %q", u.Source)
	}
	// Copies at both edges: neither side's later changes reach the other.
	if u.Pods[0] == sent {
		t.Error("update carries the sender's pod")
	}
	sent.Spec.Containers[0].Image = "changed-by-sender"
	u.Pods[0].Labels["changed"] = "by-receiver"
	if m.SourcesReady() {
		t.Error("ready with the http source unseen")
	}

	send(t, m.Snapshots(), Snapshot{Source: podutil.HTTPSource})
	if got := summarize([]Update{recvUpdate(t, m.Updates())}); !cmp.Equal(got, []string{"ADD:"}) {
		t.Errorf("first empty http snapshot gave %v, want an empty ADD", got)
	}

	// Re-sending the original file pod changes nothing; a new image updates.
	send(t, m.Snapshots(), Snapshot{Source: podutil.FileSource, Pods: []*corev1.Pod{testPod("a", func(p *corev1.Pod) { p.Spec.Containers[0].Image = "i:2" })}})
	u = recvUpdate(t, m.Updates())
	if got := summarize([]Update{u}); !cmp.Equal(got, []string{"UPDATE:a"}) {
		t.Errorf("got %v, want UPDATE:a (receiver's label change must not leak in)", got)
	}
	if !m.SourcesReady() {
		t.Error("not ready after both sources sent a snapshot")
	}

	// An incremental source: a snapshot first, then changes.
	send(t, m.Snapshots(), Snapshot{Source: podutil.APISource, Pods: []*corev1.Pod{testPod("x")}})
	recvUpdate(t, m.Updates())
	send(t, m.Changes(), Update{Op: OpAdd, Source: podutil.APISource, Pods: []*corev1.Pod{testPod("y")}})
	send(t, m.Changes(), Update{Op: OpRemove, Source: podutil.APISource, Pods: []*corev1.Pod{testPod("x")}})
	got := summarize([]Update{recvUpdate(t, m.Updates()), recvUpdate(t, m.Updates())})
	if diff := cmp.Diff([]string{"ADD:y", "REMOVE:x"}, got); diff != "" {
		t.Errorf("incremental updates (-want +got):\n%s", diff)
	}
	// The file source's pod is untouched by the API source's changes.
	send(t, m.Snapshots(), Snapshot{Source: podutil.FileSource})
	if got := summarize([]Update{recvUpdate(t, m.Updates())}); !cmp.Equal(got, []string{"REMOVE:a"}) {
		t.Errorf("got %v, want REMOVE:a", got)
	}
}

func TestNewMergerNeedsClock(t *testing.T) {
	if _, err := NewMerger(MergerConfig{Sources: []string{podutil.FileSource}}); err == nil {
		t.Error("NewMerger without a clock: want an error")
	}
}

// TestMergerRefusesBadUIDFromAnySource: the API source's pods pass the same
// UID check as static pods before anything downstream sees them.
func TestMergerRefusesBadUIDFromAnySource(t *testing.T) {
	m := startMerger(t, podutil.APISource)
	bad := testPod("bad", func(p *corev1.Pod) { p.UID = "../../../var/lib/x" })
	send(t, m.Snapshots(), Snapshot{Source: podutil.APISource, Pods: []*corev1.Pod{bad, testPod("a")}})
	if got := summarize([]Update{recvUpdate(t, m.Updates())}); !cmp.Equal(got, []string{"ADD:a"}) {
		t.Errorf("snapshot gave %v, want ADD:a only", got)
	}
	send(t, m.Changes(), Update{Op: OpAdd, Source: podutil.APISource, Pods: []*corev1.Pod{testPod("worse", func(p *corev1.Pod) { p.UID = "/" }), testPod("b")}})
	if got := summarize([]Update{recvUpdate(t, m.Updates())}); !cmp.Equal(got, []string{"ADD:b"}) {
		t.Errorf("change gave %v, want ADD:b only", got)
	}
}
