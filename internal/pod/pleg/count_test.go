package pleg

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

func TestCountRunning(t *testing.T) {
	pod := func(sandboxes []runtimestate.SandboxState, containers ...runtimestate.ContainerState) *runtimestate.Pod {
		p := &runtimestate.Pod{}
		for _, s := range sandboxes {
			p.Sandboxes = append(p.Sandboxes, runtimestate.Sandbox{State: s})
		}
		for _, c := range containers {
			p.Containers = append(p.Containers, runtimestate.Container{State: c})
		}
		return p
	}
	tests := []struct {
		name        string
		pods        map[types.UID]*runtimestate.Pod
		wantRunning int
		wantStates  map[string]int
	}{
		{name: "none", wantStates: map[string]int{}},
		{
			name:        "ready sandbox counts once",
			pods:        map[types.UID]*runtimestate.Pod{"a": pod([]runtimestate.SandboxState{ready, ready}, running)},
			wantRunning: 1, wantStates: map[string]int{"running": 1},
		},
		{
			name: "stopped sandboxes do not count; containers by state",
			pods: map[types.UID]*runtimestate.Pod{
				"a": pod([]runtimestate.SandboxState{notRdy}, exited, exited),
				"b": pod([]runtimestate.SandboxState{notRdy, ready}, running, created, runtimestate.ContainerUnknown),
			},
			wantRunning: 1, wantStates: map[string]int{"exited": 2, "running": 1, "created": 1, "unknown": 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			running, states := countRunning(tt.pods)
			if running != tt.wantRunning {
				t.Errorf("running pods = %d, want %d", running, tt.wantRunning)
			}
			if diff := cmp.Diff(tt.wantStates, states); diff != "" {
				t.Errorf("container states (-want +got):\n%s", diff)
			}
		})
	}
}
