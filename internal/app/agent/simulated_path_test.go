package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/platform/cri/crifake"
	"github.com/berthk8s/berth/internal/platform/machine"
	"github.com/berthk8s/berth/internal/sim/simdriver"
)

// shape is what a pod's status says, without the IDs and times that
// differ between two runs.
type shape struct {
	Phase      corev1.PodPhase
	Conditions map[corev1.PodConditionType]corev1.ConditionStatus
	HasIP      bool
	QOS        corev1.PodQOSClass
	Containers []containerShape
}

type containerShape struct {
	Name         string
	Ready        bool
	Started      bool
	RestartCount int32
	State        string
	LastExit     int32
}

func shapeOf(p *corev1.Pod) shape {
	s := shape{Phase: p.Status.Phase, Conditions: map[corev1.PodConditionType]corev1.ConditionStatus{}, HasIP: p.Status.PodIP != "", QOS: p.Status.QOSClass}
	for _, c := range p.Status.Conditions {
		s.Conditions[c.Type] = c.Status
	}
	for _, c := range p.Status.ContainerStatuses {
		cs := containerShape{Name: c.Name, Ready: c.Ready, Started: c.Started != nil && *c.Started, RestartCount: c.RestartCount, LastExit: -1}
		switch {
		case c.State.Running != nil:
			cs.State = "running"
		case c.State.Waiting != nil:
			cs.State = "waiting " + c.State.Waiting.Reason
		case c.State.Terminated != nil:
			cs.State = "terminated " + c.State.Terminated.Reason
		}
		if t := c.LastTerminationState.Terminated; t != nil {
			cs.LastExit = t.ExitCode
		}
		s.Containers = append(s.Containers, cs)
	}
	return s
}

// podShapes runs a node on the fake runtime, real (sim false) or
// simulated (the host's facts handed in, as berth simulate does, host-only
// components skipped), gives it a static pod, makes its container exit 1,
// and returns the pod's status shapes when running and once restarted.
func podShapes(t *testing.T, simulated bool) []shape {
	fake := crifake.New(clock.RealClock{})
	cfg, manifests, port := standalone(t, fake)
	var sim *Simulated
	if simulated {
		sim = &Simulated{
			Runtime: fake.Client(t), Machine: machine.Info{NumCPU: 4, MemoryBytes: 8 << 30, RootFSBytes: 100 << 30, CgroupV2: true},
			IPs: []string{"10.64.0.1"}, API: &rest.Config{Host: "https://127.0.0.1:1"}, Mounter: &simdriver.Mounter{},
		}
	}
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	n, err := assemble(ctx, cfg, "test", clock.RealClock{}, sim)
	if err != nil {
		cancel()
		t.Fatalf("assemble: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- n.run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
		n.close()
	})
	if err := os.WriteFile(filepath.Join(manifests, "web.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	running := waitPod(t, port, "running", func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodRunning && len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Running != nil &&
			p.Status.ContainerStatuses[0].Ready
	})
	id := running.Status.ContainerStatuses[0].ContainerID
	if err := fake.ExitContainer(id[strings.Index(id, "://")+3:], 1, "Error"); err != nil {
		t.Fatal(err)
	}
	restarted := waitPod(t, port, "restarted", func(p *corev1.Pod) bool {
		cs := p.Status.ContainerStatuses
		return len(cs) == 1 && cs[0].RestartCount == 1 && cs[0].State.Running != nil && cs[0].Ready
	})
	return []shape{shapeOf(running), shapeOf(restarted)}
}

// TestSimulatedPodPath: for the same pod and the same runtime answers
// (the container runs, exits 1, is restarted) a simulated node's pod
// goes through the same phases and statuses as a real node's.
func TestSimulatedPodPath(t *testing.T) {
	onReal := podShapes(t, false)
	simulated := podShapes(t, true)
	if diff := cmp.Diff(onReal, simulated); diff != "" {
		t.Errorf("pod statuses, real (-) and simulated (+):\n%s", diff)
	}
	if onReal[0].Phase != corev1.PodRunning || onReal[1].Containers[0].RestartCount != 1 || onReal[1].Containers[0].LastExit != 1 {
		t.Errorf("real node's pod: %+v", onReal)
	}
}
