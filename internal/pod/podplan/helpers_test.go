package podplan

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// t0 is the reference time of every test.
var t0 = time.Date(2026, 11, 22, 19, 0, 0, 0, time.UTC)

const (
	testUID    = "8f3c2e1a-0000-4000-8000-000000000001"
	testPodRef = "web-node_default(" + testUID + ")"
)

func at(d time.Duration) time.Time { return t0.Add(d) }

// newPod returns a pod with the given init and regular containers.
func newPod(policy corev1.RestartPolicy, inits, containers []string) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-node", Namespace: "default", UID: testUID},
		Spec:       corev1.PodSpec{RestartPolicy: policy},
	}
	for _, n := range inits {
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, corev1.Container{Name: n, Image: "busybox:1.36", Command: []string{"true"}})
	}
	for _, n := range containers {
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: n, Image: "nginx:1.27"})
	}
	return pod
}

// specOf returns the named container's spec (init or regular).
func specOf(pod *corev1.Pod, name string) *corev1.Container {
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == name {
			return &pod.Spec.InitContainers[i]
		}
	}
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			return &pod.Spec.Containers[i]
		}
	}
	return nil
}

func hashOf(pod *corev1.Pod, name string) uint64 { return HashContainer(specOf(pod, name)) }

func readySandbox(id string, attempt uint32) runtimestate.Sandbox {
	return runtimestate.Sandbox{ID: id, State: runtimestate.SandboxReady, Attempt: attempt, IPs: []string{"10.88.0.7"}, CreatedAt: t0}
}

func deadSandbox(id string, attempt uint32) runtimestate.Sandbox {
	s := readySandbox(id, attempt)
	s.State = runtimestate.SandboxNotReady
	return s
}

func running(pod *corev1.Pod, name, id, sandbox string) runtimestate.Container {
	return runtimestate.Container{ID: id, Name: name, SandboxID: sandbox, State: runtimestate.ContainerRunning, Hash: hashOf(pod, name), StartedAt: t0}
}

func exited(pod *corev1.Pod, name, id, sandbox string, code int32, finished time.Time) runtimestate.Container {
	c := running(pod, name, id, sandbox)
	c.State = runtimestate.ContainerExited
	c.ExitCode = code
	c.FinishedAt = finished
	return c
}

func inState(pod *corev1.Pod, name, id, sandbox string, state runtimestate.ContainerState) runtimestate.Container {
	c := running(pod, name, id, sandbox)
	c.State = state
	return c
}

func rtPod(sandboxes []runtimestate.Sandbox, containers ...runtimestate.Container) *runtimestate.Pod {
	return &runtimestate.Pod{UID: testUID, Name: "web-node", Namespace: "default", Sandboxes: sandboxes, Containers: containers}
}

func sandboxes(s ...runtimestate.Sandbox) []runtimestate.Sandbox { return s }
