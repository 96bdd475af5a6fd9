package gc

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// ctr is a container of pod uid named name, created at t0 plus age
// minutes (so higher is newer), in sandbox sb.
func ctr(id, name string, minute int, state runtimestate.ContainerState) runtimestate.Container {
	return runtimestate.Container{ID: id, Name: name, SandboxID: "sb", State: state, CreatedAt: t0.Add(time.Duration(minute) * time.Minute)}
}

const exited = runtimestate.ContainerExited

func chosenIDs(ds []DeadContainer) []string {
	var out []string
	for _, d := range ds {
		out = append(out, string(d.PodUID)+"/"+d.Container.ID)
	}
	return out
}

func TestChooseContainers(t *testing.T) {
	// Pod a: container app ran 4 times (the newest runs), sidecar twice.
	// Pod b: container web exited twice.
	basePods := func() map[types.UID]*runtimestate.Pod {
		return map[types.UID]*runtimestate.Pod{
			"a": {UID: "a", Containers: []runtimestate.Container{
				ctr("a4", "app", 40, runtimestate.ContainerRunning),
				ctr("a3", "app", 30, exited),
				ctr("a2", "app", 20, exited),
				ctr("a1", "app", 10, exited),
				ctr("s2", "sidecar", 25, exited),
				ctr("s1", "sidecar", 5, runtimestate.ContainerCreated),
			}},
			"b": {UID: "b", Containers: []runtimestate.Container{
				ctr("b2", "web", 35, exited),
				ctr("b1", "web", 15, exited),
			}},
		}
	}
	now := t0.Add(time.Hour)
	base := ContainerPolicy{MinAge: 0, MaxPerPodContainer: 1, MaxContainers: -1}
	for _, tt := range []struct {
		name      string
		policy    func(*ContainerPolicy)
		removable map[types.UID]bool
		now       time.Time
		want      []string
	}{
		{
			name: "defaults: the newest dead instance of each container is kept",
			want: []string{"a/a2", "a/a1", "a/s1", "b/b1"},
		},
		{
			name:   "two per container",
			policy: func(p *ContainerPolicy) { p.MaxPerPodContainer = 2 },
			want:   []string{"a/a1"},
		},
		{
			name:   "no per-container limit",
			policy: func(p *ContainerPolicy) { p.MaxPerPodContainer = -1 },
		},
		{
			name: "min age keeps young dead containers out of reach",
			// Only those created by minute 15 are evictable.
			policy: func(p *ContainerPolicy) { p.MinAge = 45 * time.Minute; p.MaxPerPodContainer = 0 },
			want:   []string{"a/a1", "a/s1", "b/b1"},
		},
		{
			name:      "a removable pod loses every dead container",
			removable: map[types.UID]bool{"b": true},
			want:      []string{"b/b2", "b/b1", "a/a2", "a/a1", "a/s1"},
		},
		{
			// 5 dead (a3 a2 a1 s2 s1 b2 b1 = 7), limit 2 over 3 units:
			// 0 per unit, raised to 1: a3 s2 b2 stay; 3 > 2: the oldest
			// of them, s2, goes too.
			name:   "node-wide limit spreads and then cuts the oldest",
			policy: func(p *ContainerPolicy) { p.MaxPerPodContainer = -1; p.MaxContainers = 2 },
			want:   []string{"a/a2", "a/a1", "a/s1", "b/b1", "a/s2"},
		},
		{
			// limit 6 over 3 units: 2 each: a1 goes; 6 left: fine.
			name:   "node-wide limit spread evenly",
			policy: func(p *ContainerPolicy) { p.MaxPerPodContainer = -1; p.MaxContainers = 6 },
			want:   []string{"a/a1"},
		},
		{
			name:   "node-wide limit 0 removes every dead container",
			policy: func(p *ContainerPolicy) { p.MaxContainers = 0 },
			want:   []string{"a/a2", "a/a1", "a/s1", "b/b1", "b/b2", "a/a3", "a/s2"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := base
			if tt.policy != nil {
				tt.policy(&p)
			}
			got := ChooseContainers(ContainerInputs{Pods: basePods(), ContentRemovable: tt.removable, Policy: p, Now: now})
			if diff := cmp.Diff(tt.want, chosenIDs(got)); diff != "" {
				t.Errorf("ChooseContainers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestChooseSandboxes(t *testing.T) {
	sb := func(id string, minute int, ready bool) runtimestate.Sandbox {
		s := runtimestate.Sandbox{ID: id, CreatedAt: t0.Add(time.Duration(minute) * time.Minute)}
		if ready {
			s.State = runtimestate.SandboxReady
		}
		return s
	}
	pods := func() map[types.UID]*runtimestate.Pod {
		return map[types.UID]*runtimestate.Pod{
			// a: the newest sandbox is ready; an old one holds a dead
			// container; two old ones are empty.
			"a": {UID: "a",
				Sandboxes:  []runtimestate.Sandbox{sb("a4", 40, true), sb("a3", 30, false), sb("a2", 20, false), sb("a1", 10, false)},
				Containers: []runtimestate.Container{{ID: "c", SandboxID: "a2", State: exited}},
			},
			// b: every sandbox is stopped and empty.
			"b": {UID: "b", Sandboxes: []runtimestate.Sandbox{sb("b1", 10, false), sb("b2", 20, false)}},
		}
	}
	for _, tt := range []struct {
		name      string
		removable map[types.UID]bool
		want      []string
	}{
		{name: "the newest sandbox of each pod stays, with those active", want: []string{"a1", "a3", "b1"}},
		{name: "a removable pod loses every idle sandbox", removable: map[types.UID]bool{"b": true}, want: []string{"a1", "a3", "b1", "b2"}},
		{name: "ready and holding sandboxes stay even when removable", removable: map[types.UID]bool{"a": true}, want: []string{"a1", "a3", "b1"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, s := range ChooseSandboxes(ContainerInputs{Pods: pods(), ContentRemovable: tt.removable}) {
				got = append(got, s.ID)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ChooseSandboxes (-want +got):\n%s", diff)
			}
		})
	}
}
