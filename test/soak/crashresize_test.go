package soak

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNotResized(t *testing.T) {
	want := resizeTarget(1)
	resized := func(r resources, conds ...corev1.PodCondition) corev1.Pod {
		req := r.requirements()
		return corev1.Pod{Status: corev1.PodStatus{Conditions: conds, ContainerStatuses: []corev1.ContainerStatus{{Name: "c", Resources: &req}}}}
	}
	if why := notResized(resized(want), want); why != "" {
		t.Errorf("a pod at the target: %q, want resized", why)
	}
	old := resizeTarget(0)
	if why := notResized(resized(old), want); !strings.Contains(why, "requests cpu 50m, want 51m") {
		t.Errorf("a pod at its old resources: %q", why)
	}
	pending := corev1.PodCondition{Type: corev1.PodResizeInProgress, Status: corev1.ConditionTrue}
	if why := notResized(resized(want, pending), want); !strings.HasPrefix(why, "PodResizeInProgress") {
		t.Errorf("a pod still resizing: %q", why)
	}
	if why := notResized(corev1.Pod{}, want); why == "" {
		t.Error("a pod without container status resources counts as resized")
	}
}

func TestCgroupLimits(t *testing.T) {
	write := func(root string, files map[string]string) {
		for name, v := range files {
			p := filepath.Join(root, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(v+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	const cg = "/kubepods/burstable/podu/c1"
	v1 := t.TempDir()
	write(v1, map[string]string{"cpu" + cg + "/cpu.cfs_quota_us": "30000", "memory" + cg + "/memory.limit_in_bytes": "100663296"})
	v2 := t.TempDir()
	write(v2, map[string]string{"cgroup.controllers": "cpu memory", cg + "/cpu.max": "30000 100000", cg + "/memory.max": "100663296"})
	unlimited := t.TempDir()
	write(unlimited, map[string]string{"cgroup.controllers": "cpu memory", cg + "/cpu.max": "max 100000", cg + "/memory.max": "max"})
	for _, tc := range []struct {
		name, root string
		quota, mem int64
		err        string
	}{
		{name: "v1", root: v1, quota: 30000, mem: 96 << 20},
		{name: "v2", root: v2, quota: 30000, mem: 96 << 20},
		{name: "v2 unlimited", root: unlimited, err: `memory limit "max"`},
		{name: "missing", root: t.TempDir(), err: "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			quota, mem, err := host{cgroupRoot: tc.root}.limits(cg)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one with %q", err, tc.err)
				}
				return
			}
			if err != nil || quota != tc.quota || mem != tc.mem {
				t.Errorf("limits: %d, %d, %v; want %d, %d", quota, mem, err, tc.quota, tc.mem)
			}
		})
	}
}

func TestRestartedContainers(t *testing.T) {
	status := func(restarts int32, reason string, started time.Time) corev1.Pod {
		return corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{
			Name: "c", RestartCount: restarts,
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: reason, ExitCode: 128, StartedAt: metav1.NewTime(started)}},
		}}}}
	}
	pods := []corev1.Pod{
		status(0, "", time.Time{}),
		status(1, "StartError", time.Time{}),     // berth: a start the kill cut short
		status(1, "StartError", time.Unix(0, 0)), // upstream: the same
		status(1, "Error", time.Unix(1000, 0)),   // an instance that ran
		status(2, "StartError", time.Time{}),     // more than the kill explains
	}
	cut, other, why := restartedContainers(pods)
	if cut != 2 || other != 3 || len(why) != 4 {
		t.Errorf("restartedContainers = %d cut, %d other, %d described; want 2, 3, 4", cut, other, len(why))
	}
}
