package kuberuntime

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/berthk8s/berth/internal/platform/cri"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

func twoContainerPod() *corev1.Pod {
	pod := basePod()
	side := pod.Spec.Containers[0]
	side.Name = "side"
	pod.Spec.Containers = append(pod.Spec.Containers, side)
	return pod
}

func TestKillPodStopsEverything(t *testing.T) {
	e := newEnv(t)
	e.fake.AddImage("busybox:1.36")
	pod := twoContainerPod()
	e.sync(pod)
	e.running(pod, "app")
	e.running(pod, "side")
	e.events.take()
	if err := e.m.KillPod(e.ctx, pod, e.status(pod), nil); err != nil {
		t.Fatal(err)
	}
	rt := e.status(pod)
	if rt.Running() {
		t.Errorf("pod still running after KillPod: %+v", rt)
	}
	evs := e.events.take()
	slices.Sort(evs)
	want := []string{"Normal Killing Stopping container app", "Normal Killing Stopping container side"}
	if !slices.Equal(evs, want) {
		t.Errorf("events = %q, want %q", evs, want)
	}
	// Killing an already stopped pod is a no-op, not an error.
	if err := e.m.KillPod(e.ctx, pod, rt, nil); err != nil {
		t.Errorf("second KillPod: %v", err)
	}
	if err := e.m.RemovePod(e.ctx, rt); err != nil {
		t.Fatal(err)
	}
	if rt := e.status(pod); len(rt.Sandboxes)+len(rt.Containers) != 0 {
		t.Errorf("RemovePod left %+v", rt)
	}
}

func TestKillPodOrphan(t *testing.T) {
	e := newEnv(t)
	e.fake.AddImage("busybox:1.36")
	pod := basePod()
	e.sync(pod)
	pods, err := e.m.ListPods(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	rt := pods[pod.UID]
	if rt == nil || rt.Name != "web" || rt.Namespace != "default" {
		t.Fatalf("ListPods = %+v", pods)
	}
	e.events.take()
	if err := e.m.KillPod(e.ctx, nil, rt, nil); err != nil {
		t.Fatal(err)
	}
	if e.status(pod).Running() {
		t.Error("orphan still running")
	}
	if evs := e.events.take(); !slices.Equal(evs, []string{"Normal Killing Stopping container app"}) {
		t.Errorf("events = %q", evs)
	}
}

func TestKillPodFailure(t *testing.T) {
	e := newEnv(t)
	e.fake.AddImage("busybox:1.36")
	pod := basePod()
	e.sync(pod)
	e.fake.InjectError("StopPodSandbox", cri.StatusError(cri.ErrUnavailable, "runtime down"))
	e.events.take()
	if err := e.m.KillPod(e.ctx, pod, e.status(pod), nil); err == nil {
		t.Fatal("KillPod succeeded though StopPodSandbox failed")
	}
	evs := e.events.take()
	if !hasEvent(evs, "Warning FailedKillPod error killing pod: ") {
		t.Errorf("events %q lack FailedKillPod", evs)
	}
}

func TestListPodsMatchesPodStatus(t *testing.T) {
	e := newEnv(t)
	e.fake.AddImage("busybox:1.36")
	pod := twoContainerPod()
	e.sync(pod)
	// A sandbox berth did not create is ignored.
	if _, err := e.m.cfg.Runtime.RunPodSandbox(e.ctx, &runtimeapi.RunPodSandboxRequest{Config: &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "foreign", Namespace: "other", Uid: "x"},
	}}); err != nil {
		t.Fatal(err)
	}
	pods, err := e.m.ListPods(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) != 1 {
		t.Fatalf("ListPods = %d pods, want 1", len(pods))
	}
	listed, full := pods[pod.UID], e.status(pod)
	brief := func(p *runtimestate.Pod) []string {
		var out []string
		for _, s := range p.Sandboxes {
			out = append(out, s.ID+" "+s.State.String())
		}
		for _, c := range p.Containers {
			out = append(out, c.ID+" "+c.Name+" "+c.State.String()+" "+c.SandboxID)
		}
		return out
	}
	if diff := cmp.Diff(brief(full), brief(listed)); diff != "" {
		t.Errorf("ListPods and PodStatus disagree (-status +list):\n%s", diff)
	}
	one, err := e.m.ListPod(e.ctx, pod.UID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(brief(listed), brief(one)); diff != "" {
		t.Errorf("ListPod and ListPods disagree (-all +one):\n%s", diff)
	}
	if none, err := e.m.ListPod(e.ctx, "x"); none != nil || err != nil {
		t.Errorf("ListPod of a foreign pod = %+v, %v; want nil, nil", none, err)
	}
	for _, c := range listed.Containers {
		fc := full.LatestContainer(c.Name)
		if c.Hash != fc.Hash || c.RestartCount != fc.RestartCount || c.Hash == 0 {
			t.Errorf("listed %s: hash %x restarts %d, status: hash %x restarts %d", c.Name, c.Hash, c.RestartCount, fc.Hash, fc.RestartCount)
		}
	}
}

func TestPodStatusTerminationMessage(t *testing.T) {
	e := newEnv(t)
	e.fake.AddImage("busybox:1.36")
	pod := basePod()
	e.sync(pod)
	c := e.running(pod, "app")
	if c.TerminationMessagePath != "/dev/termination-log" || c.TerminationMessagePolicy != "File" {
		t.Errorf("termination message settings = %q %q", c.TerminationMessagePath, c.TerminationMessagePolicy)
	}
	hostFile := filepath.Join(e.pods, "uid-1", "containers", "app", "0")
	if err := os.WriteFile(hostFile, []byte("bye"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := e.fake.ExitContainer(c.ID, 3, ""); err != nil {
		t.Fatal(err)
	}
	got := e.status(pod).LatestContainer("app")
	if got.State != runtimestate.ContainerExited || got.ExitCode != 3 || got.Reason != "Error" || got.Message != "bye" {
		t.Errorf("exited container = %+v", got)
	}
	if got.FinishedAt.IsZero() || got.StartedAt.IsZero() {
		t.Errorf("times not filled: %+v", got)
	}
}

func TestPodStatusSkipsVanished(t *testing.T) {
	e := newEnv(t)
	e.fake.AddImage("busybox:1.36")
	pod := twoContainerPod()
	e.sync(pod)
	e.fake.InjectError("ContainerStatus", cri.StatusError(cri.ErrNotFound, "gone"))
	e.fake.InjectError("PodSandboxStatus", cri.StatusError(cri.ErrNotFound, "gone"))
	rt := e.status(pod)
	if len(rt.Containers) != 1 || len(rt.Sandboxes) != 0 {
		t.Errorf("status = %+v, want one container and no sandbox", rt)
	}
	e.fake.InjectError("ContainerStatus", cri.StatusError(cri.ErrUnavailable, "down"))
	if _, err := e.m.PodStatus(e.ctx, pod.UID, pod.Name, pod.Namespace); err == nil {
		t.Error("PodStatus hid a runtime failure")
	}
}

func TestPodStatusTerminationMessageFallbackToLogs(t *testing.T) {
	var lines strings.Builder
	for i := range 100 {
		fmt.Fprintf(&lines, "2026-01-01T00:00:00.000000000Z stdout F line %d %s\n", i, strings.Repeat("x", 30))
	}
	lines.WriteString("2026-01-01T00:00:00.000000000Z stderr P last \n2026-01-01T00:00:00.000000000Z stderr F words\n")
	var want strings.Builder
	for i := 21; i < 100; i++ {
		fmt.Fprintf(&want, "line %d %s\n", i, strings.Repeat("x", 30))
	}
	want.WriteString("last words\n")
	// 80 lines, then the last 2048 bytes of them.
	wantTail := want.String()[want.Len()-2048:]
	tests := []struct {
		name    string
		file    string
		code    int32
		policy  corev1.TerminationMessagePolicy
		wantMsg string
	}{
		{name: "failed, empty file: the log tail", code: 2, policy: corev1.TerminationMessageFallbackToLogsOnError, wantMsg: wantTail},
		{name: "failed, file written: the file", file: "bye", code: 2, policy: corev1.TerminationMessageFallbackToLogsOnError, wantMsg: "bye"},
		{name: "succeeded: no fallback", code: 0, policy: corev1.TerminationMessageFallbackToLogsOnError, wantMsg: ""},
		{name: "File policy: no fallback", code: 2, policy: corev1.TerminationMessageReadFile, wantMsg: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.fake.AddImage("busybox:1.36")
			pod := basePod()
			pod.Spec.Containers[0].TerminationMessagePolicy = tt.policy
			e.sync(pod)
			c := e.running(pod, "app")
			if err := os.WriteFile(c.LogPath, []byte(lines.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			if tt.file != "" {
				hostFile := filepath.Join(e.pods, "uid-1", "containers", "app", "0")
				if err := os.WriteFile(hostFile, []byte(tt.file), 0o666); err != nil {
					t.Fatal(err)
				}
			}
			if err := e.fake.ExitContainer(c.ID, tt.code, ""); err != nil {
				t.Fatal(err)
			}
			got := e.status(pod).LatestContainer("app")
			if len(got.Message) > 2048 {
				t.Errorf("message is %d bytes, want at most 2048", len(got.Message))
			}
			if diff := cmp.Diff(tt.wantMsg, got.Message); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
		})
	}
}
