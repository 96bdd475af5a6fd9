package podstatus

import (
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berthk8s/berth/internal/podkit/podutil"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

var (
	t0  = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now = t0.Add(time.Hour)
)

func mt(t time.Time) metav1.Time { return metav1.NewTime(t) }
func ptr[T any](v T) *T          { return &v }

// staticPod returns a file-sourced pod with one regular container per name
// (image "<name>:1") and restart policy Always.
func staticPod(names ...string) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web-node", Namespace: "default", UID: "uid1",
			Annotations: map[string]string{podutil.ConfigSourceAnnotation: "file"},
		},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyAlways},
	}
	for _, n := range names {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: n, Image: n + ":1"})
	}
	return p
}

func withInit(p *corev1.Pod, names ...string) *corev1.Pod {
	for _, n := range names {
		p.Spec.InitContainers = append(p.Spec.InitContainers, corev1.Container{Name: n, Image: n + ":1"})
	}
	return p
}

func withPolicy(p *corev1.Pod, rp corev1.RestartPolicy) *corev1.Pod {
	p.Spec.RestartPolicy = rp
	return p
}

func readySandbox(ips ...string) runtimestate.Sandbox {
	return runtimestate.Sandbox{ID: "sb1", State: runtimestate.SandboxReady, CreatedAt: t0, IPs: ips}
}

// rt builds a runtime pod; containers must be given newest first.
func rt(sandboxes []runtimestate.Sandbox, containers ...runtimestate.Container) *runtimestate.Pod {
	return &runtimestate.Pod{UID: "uid1", Name: "web-node", Namespace: "default", Sandboxes: sandboxes, Containers: containers}
}

func running(name, id string, restarts int) runtimestate.Container {
	return runtimestate.Container{
		ID: id, Name: name, SandboxID: "sb1", State: runtimestate.ContainerRunning, RestartCount: restarts,
		Image: name + ":1", ImageRef: "sha256:" + name, StartedAt: t0.Add(time.Minute),
	}
}

func exited(name, id string, code int32, reason string, restarts int) runtimestate.Container {
	return runtimestate.Container{
		ID: id, Name: name, SandboxID: "sb1", State: runtimestate.ContainerExited, RestartCount: restarts,
		Image: name + ":1", ImageRef: "sha256:" + name, StartedAt: t0.Add(time.Minute),
		FinishedAt: t0.Add(2 * time.Minute), ExitCode: code, Reason: reason,
	}
}

func withState(c runtimestate.Container, s runtimestate.ContainerState) runtimestate.Container {
	c.State = s
	return c
}

func sbs(s ...runtimestate.Sandbox) []runtimestate.Sandbox { return s }

func cond(status []corev1.PodCondition, t corev1.PodConditionType) corev1.PodCondition {
	for _, c := range status {
		if c.Type == t {
			return c
		}
	}
	return corev1.PodCondition{}
}

// ignoreResources leaves the container statuses' resources out of a
// comparison, for the tests of other concerns (resources_test.go has
// theirs).
var ignoreResources cmp.Option = cmpopts.IgnoreFields(corev1.ContainerStatus{}, "Resources", "AllocatedResources")
