package e2e

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// grpcHealthImage serves grpc.health.v1 (images/grpchealth, imported by
// hack/images.sh).
const grpcHealthImage = "localhost/berth/grpc-health:1.0"

// TestClusterProbes runs pods with liveness, readiness and startup probes
// on a berth node joined to a real control plane. The pods are created at
// once and checked in turn, so the probes' waits overlap.
func TestClusterProbes(t *testing.T) {
	e := startClusterEnv(t)
	e.node.start()
	e.waitAPI(t, "default service account", func(ctx context.Context) (bool, error) {
		_, err := e.admin.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	for _, p := range []*corev1.Pod{readinessPod(), livenessPod(), startupPod(), handlersPod(), failingHandlersPod()} {
		_, err := e.admin.CoreV1().Pods("default").Create(context.Background(), p, metav1.CreateOptions{})
		must(t, err)
	}
	t.Run("ReadinessFlipsReadyBothWays", e.testReadinessFlips)
	t.Run("LivenessFailureRestarts", e.testLivenessRestarts)
	t.Run("StartupDelaysLiveness", e.testStartupDelaysLiveness)
	t.Run("HandlersExecHTTPTCPGRPC", e.testHandlers)
}

// probePod is a busybox pod with one container running script; SIGTERM
// ends it at once.
func probePod(name, script string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken:  ptr.To(false),
			TerminationGracePeriodSeconds: ptr.To[int64](2),
			Containers: []corev1.Container{{
				Name: "main", Image: busybox, ImagePullPolicy: corev1.PullIfNotPresent,
				Command: []string{"sh", "-c", "trap 'exit 0' TERM; " + script},
			}},
		},
	}
}

func execProbe(period, failures int32, cmd ...string) *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: cmd}},
		PeriodSeconds: period, FailureThreshold: failures, TimeoutSeconds: 2,
	}
}

// readinessPod is ready for 6 s, then not for 6 s, and so on.
func readinessPod() *corev1.Pod {
	p := probePod("probe-ready", "while true; do touch /tmp/ready; sleep 6; rm -f /tmp/ready; sleep 6; done & wait")
	p.Spec.Containers[0].ReadinessProbe = execProbe(1, 1, "cat", "/tmp/ready")
	return p
}

// livenessPod is healthy for 3 s, then fails its liveness probe.
func livenessPod() *corev1.Pod {
	p := probePod("probe-live", "touch /tmp/healthy; sleep 3; rm -f /tmp/healthy; sleep 600 & wait")
	p.Spec.Containers[0].LivenessProbe = execProbe(1, 2, "cat", "/tmp/healthy")
	return p
}

// startupPod starts after 10 s; its liveness probe would fail until then.
func startupPod() *corev1.Pod {
	p := probePod("probe-startup", "sleep 10; touch /tmp/started; sleep 600 & wait")
	p.Spec.Containers[0].StartupProbe = execProbe(1, 60, "cat", "/tmp/started")
	p.Spec.Containers[0].LivenessProbe = execProbe(1, 1, "cat", "/tmp/started")
	return p
}

// handlersPod has one container per network handler, each with a readiness
// probe that passes: httpGet by port name with a header, tcpSocket, grpc.
func handlersPod() *corev1.Pod {
	p := probePod("probe-handlers", "mkdir -p /www && echo ok > /www/index.html && exec httpd -f -p 8080 -h /www")
	p.Spec.Containers[0].Name = "http"
	p.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "web", ContainerPort: 8080}}
	p.Spec.Containers[0].ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
		Path: "/index.html", Port: intstr.FromString("web"), HTTPHeaders: []corev1.HTTPHeader{{Name: "X-Probe", Value: "berth"}},
	}}, PeriodSeconds: 1}
	p.Spec.Containers = append(p.Spec.Containers,
		corev1.Container{
			Name: "tcp", Image: busybox, ImagePullPolicy: corev1.PullIfNotPresent,
			Command: []string{"sh", "-c", "mkdir -p /www && exec httpd -f -p 9090 -h /www"},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{
				Port: intstr.FromInt32(9090),
			}}, PeriodSeconds: 1},
		},
		corev1.Container{
			Name: "grpc", Image: grpcHealthImage, ImagePullPolicy: corev1.PullIfNotPresent,
			Args:           []string{"-port", "9000"},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: 9000}}, PeriodSeconds: 1},
			LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{GRPC: &corev1.GRPCAction{
				Port: 9000, Service: ptr.To("serving"),
			}}, PeriodSeconds: 1},
		},
	)
	return p
}

// failingHandlersPod has readiness probes that fail: an HTTP 404 and a
// NOT_SERVING gRPC service.
func failingHandlersPod() *corev1.Pod {
	p := probePod("probe-failing", "mkdir -p /www && exec httpd -f -p 8080 -h /www")
	p.Spec.Containers[0].Name = "http"
	p.Spec.Containers[0].ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
		Path: "/missing", Port: intstr.FromInt32(8080),
	}}, PeriodSeconds: 1}
	p.Spec.Containers = append(p.Spec.Containers, corev1.Container{
		Name: "grpc", Image: grpcHealthImage, ImagePullPolicy: corev1.PullIfNotPresent,
		Args: []string{"-port", "9000"},
		ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{GRPC: &corev1.GRPCAction{
			Port: 9000, Service: ptr.To("not-serving"),
		}}, PeriodSeconds: 1},
	})
	return p
}

func (e *clusterEnv) getPod(ctx context.Context, name string) (*corev1.Pod, error) {
	return e.admin.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
}

// waitPod waits until cond holds for the named pod and returns it.
func (e *clusterEnv) waitPodCond(t *testing.T, name, what string, cond func(p *corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	var pod *corev1.Pod
	e.waitAPI(t, name+": "+what, func(ctx context.Context) (bool, error) {
		p, err := e.getPod(ctx, name)
		if err != nil {
			return false, err
		}
		pod = p
		return cond(p), nil
	})
	return pod
}

// waitEvent waits for an event about the pod with the reason and a message
// containing text, and returns its message.
func (e *clusterEnv) waitEvent(t *testing.T, pod, reason, text string) string {
	t.Helper()
	var msg string
	e.waitAPI(t, pod+": event "+reason+" "+text, func(ctx context.Context) (bool, error) {
		evs, err := e.admin.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + pod + ",reason=" + reason})
		if err != nil {
			return false, err
		}
		for _, ev := range evs.Items {
			if strings.Contains(ev.Message, text) && ev.Source.Component == "kubelet" {
				msg = ev.Message
				return true, nil
			}
		}
		return false, nil
	})
	return msg
}

func (e *clusterEnv) hasEvent(t *testing.T, pod, reason, text string) bool {
	t.Helper()
	evs, err := e.admin.CoreV1().Events("default").List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=" + pod + ",reason=" + reason})
	must(t, err)
	for _, ev := range evs.Items {
		if strings.Contains(ev.Message, text) {
			return true
		}
	}
	return false
}

func containerStatus(p *corev1.Pod, name string) *corev1.ContainerStatus {
	for i := range p.Status.ContainerStatuses {
		if p.Status.ContainerStatuses[i].Name == name {
			return &p.Status.ContainerStatuses[i]
		}
	}
	return nil
}

func (e *clusterEnv) testReadinessFlips(t *testing.T) {
	const name = "probe-ready"
	ready := func(want corev1.ConditionStatus) func(p *corev1.Pod) bool {
		return func(p *corev1.Pod) bool {
			cs := containerStatus(p, "main")
			return running(p) && cs != nil && cs.Ready == (want == corev1.ConditionTrue) &&
				hasCondition(p, corev1.PodReady, want) && hasCondition(p, corev1.ContainersReady, want)
		}
	}
	e.waitPodCond(t, name, "Ready", ready(corev1.ConditionTrue))
	e.waitPodCond(t, name, "not Ready", ready(corev1.ConditionFalse))
	p := e.waitPodCond(t, name, "Ready again", ready(corev1.ConditionTrue))
	if cs := containerStatus(p, "main"); cs.RestartCount != 0 {
		t.Errorf("readiness failures restarted the container: restartCount %d", cs.RestartCount)
	}
	e.waitEvent(t, name, "Unhealthy", "Readiness probe failed: cat: can't open '/tmp/ready'")
}

func (e *clusterEnv) testLivenessRestarts(t *testing.T) {
	const name = "probe-live"
	e.waitPodCond(t, name, "restarted", func(p *corev1.Pod) bool {
		cs := containerStatus(p, "main")
		return cs != nil && cs.RestartCount >= 1 && cs.LastTerminationState.Terminated != nil
	})
	e.waitEvent(t, name, "Unhealthy", "Liveness probe failed: cat: can't open '/tmp/healthy'")
	e.waitEvent(t, name, "Killing", "Container main failed liveness probe, will be restarted")
}

func (e *clusterEnv) testStartupDelaysLiveness(t *testing.T) {
	const name = "probe-startup"
	p := e.waitPodCond(t, name, "started", func(p *corev1.Pod) bool {
		cs := containerStatus(p, "main")
		return cs != nil && cs.Started != nil && *cs.Started && cs.Ready
	})
	cs := containerStatus(p, "main")
	if cs.RestartCount != 0 {
		t.Errorf("restartCount %d: liveness ran before the startup probe passed", cs.RestartCount)
	}
	if started := cs.State.Running.StartedAt.Time; p.Status.Conditions != nil {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.ContainersReady && c.LastTransitionTime.Sub(started).Seconds() < 9 {
				t.Errorf("ready %s after start, before the startup probe could pass", c.LastTransitionTime.Sub(started))
			}
		}
	}
	if e.hasEvent(t, name, "Unhealthy", "Liveness probe failed") {
		t.Error("a liveness probe ran before the startup probe passed")
	}
	e.waitEvent(t, name, "Unhealthy", "Startup probe failed: cat: can't open '/tmp/started'")
}

func (e *clusterEnv) testHandlers(t *testing.T) {
	p := e.waitPodCond(t, "probe-handlers", "Ready (httpGet, tcpSocket, grpc)", func(p *corev1.Pod) bool {
		return running(p) && hasCondition(p, corev1.PodReady, corev1.ConditionTrue)
	})
	for _, cs := range p.Status.ContainerStatuses {
		if !cs.Ready || cs.RestartCount != 0 {
			t.Errorf("container %s: ready %v restartCount %d", cs.Name, cs.Ready, cs.RestartCount)
		}
	}
	e.waitEvent(t, "probe-failing", "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 404")
	e.waitEvent(t, "probe-failing", "Unhealthy", `Readiness probe failed: service unhealthy (responded with "NOT_SERVING")`)
	p, err := e.getPod(context.Background(), "probe-failing")
	must(t, err)
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Ready {
			t.Errorf("container %s is ready with a failing readiness probe", cs.Name)
		}
	}
	if hasCondition(p, corev1.PodReady, corev1.ConditionTrue) {
		t.Error("probe-failing is Ready")
	}
}
