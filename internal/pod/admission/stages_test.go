package admission

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berthk8s/berth/internal/pod/timeline"
)

type noEvents struct{}

func (noEvents) Eventf(*corev1.Pod, string, string, string, ...any) {}

// TestAdmitRecordsStage: each admission is the admitted stage of the
// pod's timeline, a rejection failed with its reason and message.
func TestAdmitRecordsStage(t *testing.T) {
	rec, err := timeline.New(timeline.Config{Clock: clocktesting.NewFakePassiveClock(time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC))})
	if err != nil {
		t.Fatal(err)
	}
	shutdown := false
	a := &Admitter{
		Handlers: &Handlers{ShuttingDown: func() bool { return shutdown }},
		Active:   func(types.UID) bool { return true },
		Reject:   func(types.UID, corev1.PodStatus) {},
		Recorder: noEvents{},
		Stages:   rec,
	}
	ok := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "ok", UID: "u1"}}
	a.Admit(context.Background(), ok, nil)
	shutdown = true
	refused := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "refused", UID: "u2"}}
	a.Admit(context.Background(), refused, nil)

	type row struct {
		Name    string
		Outcome timeline.Outcome
		Message string
	}
	for name, want := range map[string]row{
		"ok":      {timeline.StageAdmitted, timeline.OutcomeOK, ""},
		"refused": {timeline.StageAdmitted, timeline.OutcomeFailed, "NodeShutdown: Pod was rejected as the node is shutting down."},
	} {
		tl, found := rec.Get("ns", name)
		if !found || len(tl.Stages) != 1 {
			t.Fatalf("pod %s: timeline %+v, want one stage", name, tl)
		}
		s := tl.Stages[0]
		if diff := cmp.Diff(want, row{s.Name, s.Outcome, s.Message}); diff != "" {
			t.Errorf("pod %s: stage (-want +got):\n%s", name, diff)
		}
	}
}
