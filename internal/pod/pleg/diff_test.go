package pleg

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// podWithContainer returns a listing with one pod holding one container
// "c1" in state s, or an empty listing when !present.
func podWithContainer(uid types.UID, s runtimestate.ContainerState, present bool) map[types.UID]*runtimestate.Pod {
	if !present {
		return map[types.UID]*runtimestate.Pod{}
	}
	return map[types.UID]*runtimestate.Pod{uid: {
		UID:        uid,
		Containers: []runtimestate.Container{{ID: "c1", Name: "app", State: s}},
	}}
}

func TestDiffContainerTransitions(t *testing.T) {
	type st struct {
		name    string
		present bool
		state   runtimestate.ContainerState
	}
	states := []st{
		{"absent", false, 0},
		{"created", true, runtimestate.ContainerCreated},
		{"running", true, runtimestate.ContainerRunning},
		{"exited", true, runtimestate.ContainerExited},
		{"unknown", true, runtimestate.ContainerUnknown},
	}
	const (
		S = ContainerStarted
		D = ContainerDied
		R = ContainerRemoved
		C = ContainerChanged
	)
	// want[old][new]; created and unknown are the same diff state.
	want := map[string]map[string][]EventType{
		"absent":  {"absent": nil, "created": {C}, "running": {S}, "exited": {D}, "unknown": {C}},
		"created": {"absent": {D, R}, "created": nil, "running": {S}, "exited": {D}, "unknown": nil},
		"running": {"absent": {D, R}, "created": {C}, "running": nil, "exited": {D}, "unknown": {C}},
		"exited":  {"absent": {R}, "created": {C}, "running": {S}, "exited": nil, "unknown": {C}},
		"unknown": {"absent": {D, R}, "created": nil, "running": {S}, "exited": {D}, "unknown": nil},
	}
	for _, from := range states {
		for _, to := range states {
			t.Run(fmt.Sprintf("%s->%s", from.name, to.name), func(t *testing.T) {
				got := Diff(podWithContainer("p", from.state, from.present), podWithContainer("p", to.state, to.present))
				var wantEvents []Event
				for _, et := range want[from.name][to.name] {
					wantEvents = append(wantEvents, Event{ID: "p", Type: et, Data: "c1"})
				}
				if diff := cmp.Diff(wantEvents, got); diff != "" {
					t.Errorf("Diff() mismatch (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func TestDiffSandboxTransitions(t *testing.T) {
	sb := func(present bool, s runtimestate.SandboxState) map[types.UID]*runtimestate.Pod {
		if !present {
			return nil
		}
		return map[types.UID]*runtimestate.Pod{"p": {UID: "p", Sandboxes: []runtimestate.Sandbox{{ID: "s1", State: s}}}}
	}
	tests := []struct {
		name     string
		old, new map[types.UID]*runtimestate.Pod
		want     []EventType
	}{
		{"absent->ready", sb(false, 0), sb(true, runtimestate.SandboxReady), []EventType{ContainerStarted}},
		{"absent->notready", sb(false, 0), sb(true, runtimestate.SandboxNotReady), []EventType{ContainerDied}},
		{"ready->notready", sb(true, runtimestate.SandboxReady), sb(true, runtimestate.SandboxNotReady), []EventType{ContainerDied}},
		{"ready->absent", sb(true, runtimestate.SandboxReady), sb(false, 0), []EventType{ContainerDied, ContainerRemoved}},
		{"notready->absent", sb(true, runtimestate.SandboxNotReady), sb(false, 0), []EventType{ContainerRemoved}},
		{"notready->ready", sb(true, runtimestate.SandboxNotReady), sb(true, runtimestate.SandboxReady), []EventType{ContainerStarted}},
		{"ready->ready", sb(true, runtimestate.SandboxReady), sb(true, runtimestate.SandboxReady), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var want []Event
			for _, et := range tc.want {
				want = append(want, Event{ID: "p", Type: et, Data: "s1"})
			}
			if diff := cmp.Diff(want, Diff(tc.old, tc.new)); diff != "" {
				t.Errorf("Diff() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDiffOrderAndInputsUntouched(t *testing.T) {
	prev := map[types.UID]*runtimestate.Pod{
		"b": {UID: "b", Containers: []runtimestate.Container{{ID: "z", State: runtimestate.ContainerRunning}}},
		"c": {UID: "c", Containers: []runtimestate.Container{{ID: "y", State: runtimestate.ContainerExited}}},
	}
	cur := map[types.UID]*runtimestate.Pod{
		"b": {UID: "b", Containers: []runtimestate.Container{
			{ID: "z", State: runtimestate.ContainerExited},
			{ID: "a", State: runtimestate.ContainerRunning},
		}},
		"a": {UID: "a", Sandboxes: []runtimestate.Sandbox{{ID: "s", State: runtimestate.SandboxReady}}},
	}
	want := []Event{
		{ID: "a", Type: ContainerStarted, Data: "s"},
		{ID: "b", Type: ContainerStarted, Data: "a"},
		{ID: "b", Type: ContainerDied, Data: "z"},
		{ID: "c", Type: ContainerRemoved, Data: "y"},
	}
	for i := 0; i < 5; i++ { // map order must not leak into the result
		if diff := cmp.Diff(want, Diff(prev, cur)); diff != "" {
			t.Fatalf("Diff() mismatch (-want +got):\n%s", diff)
		}
	}
	if len(prev) != 2 || len(cur) != 2 || len(cur["b"].Containers) != 2 {
		t.Errorf("Diff modified its inputs")
	}
}

func BenchmarkDiff(b *testing.B) {
	mk := func(state runtimestate.ContainerState) map[types.UID]*runtimestate.Pod {
		m := make(map[types.UID]*runtimestate.Pod, 100)
		for i := 0; i < 100; i++ {
			uid := types.UID(fmt.Sprintf("pod-%03d", i))
			p := &runtimestate.Pod{UID: uid, Sandboxes: []runtimestate.Sandbox{{ID: string(uid) + "-sb", State: runtimestate.SandboxReady}}}
			for j := 0; j < 3; j++ {
				p.Containers = append(p.Containers, runtimestate.Container{ID: fmt.Sprintf("%s-c%d", uid, j), State: state})
			}
			m[uid] = p
		}
		return m
	}
	prev, cur := mk(runtimestate.ContainerRunning), mk(runtimestate.ContainerRunning)
	// One pod in ten changes.
	for i := 0; i < 100; i += 10 {
		cur[types.UID(fmt.Sprintf("pod-%03d", i))].Containers[0].State = runtimestate.ContainerExited
	}
	b.ReportAllocs()
	for b.Loop() {
		if got := Diff(prev, cur); len(got) != 10 {
			b.Fatalf("got %d events, want 10", len(got))
		}
	}
}
