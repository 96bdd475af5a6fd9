package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// webPod is a static pod serving body on port 8080 with busybox httpd.
func webPod(name, body string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
  labels:
    app: %s
spec:
  terminationGracePeriodSeconds: 2
  containers:
  - name: web
    image: %s
    imagePullPolicy: IfNotPresent
    command: ["sh", "-c", "mkdir -p /www && echo %s > /www/index.html && exec httpd -f -p 8080 -h /www"]
    ports:
    - containerPort: 8080
`, name, name, busybox, body)
}

func fullName(name string) string { return name + "-" + nodeName }

func TestStaticPodServesHTTP(t *testing.T) {
	n := newNode(t)
	n.start()
	n.writeManifest("web.yaml", webPod("web", "hello-berth"))
	pod := n.waitPod(fullName("web"), "running", running)
	if pod.Status.HostIP == "" || pod.Status.StartTime == nil {
		t.Errorf("status lacks hostIP or startTime: %+v", pod.Status)
	}
	if !hasCondition(pod, corev1.PodReady, corev1.ConditionTrue) {
		t.Errorf("pod not Ready: %+v", pod.Status.Conditions)
	}
	var body string
	n.waitFor("HTTP answer from the pod IP", func() bool {
		b, err := httpGet("http://" + pod.Status.PodIP + ":8080/")
		body = b
		return err == nil
	})
	if strings.TrimSpace(body) != "hello-berth" {
		t.Errorf("body = %q, want hello-berth", body)
	}
	logDir := filepath.Join("/var/log/pods", fmt.Sprintf("default_%s_%s", pod.Name, pod.UID))
	if _, err := os.Stat(filepath.Join(logDir, "web", "0.log")); err != nil {
		t.Errorf("container log file: %v", err)
	}
	c := runtimeClient(t)
	n.removeManifest("web.yaml")
	n.waitNoPod(fullName("web"))
	n.waitFor("sandbox and containers removed", func() bool {
		sb, cs := runtimeObjects(t, c, string(pod.UID))
		return len(sb) == 0 && len(cs) == 0
	})
	n.waitFor("pod and log directories removed", func() bool {
		_, errLog := os.Stat(logDir)
		_, errPod := os.Stat(filepath.Join(n.rootDir, "pods", string(pod.UID)))
		return os.IsNotExist(errLog) && os.IsNotExist(errPod)
	})
}

func TestKilledContainerRestarts(t *testing.T) {
	n := newNode(t)
	n.start()
	n.writeManifest("crash.yaml", webPod("crash", "v1"))
	pod := n.waitPod(fullName("crash"), "running", running)
	c := runtimeClient(t)
	first := pod.Status.ContainerStatuses[0].ContainerID
	id := strings.TrimPrefix(first, "containerd://")
	if _, err := c.Runtime.StopContainer(context.Background(), &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: 0}); err != nil {
		t.Fatalf("kill container: %v", err)
	}
	pod = n.waitPod(fullName("crash"), "restarted", func(p *corev1.Pod) bool {
		return running(p) && p.Status.ContainerStatuses[0].RestartCount == 1
	})
	cs := pod.Status.ContainerStatuses[0]
	if cs.ContainerID == first {
		t.Errorf("container ID unchanged after restart: %s", first)
	}
	if cs.LastTerminationState.Terminated == nil || cs.LastTerminationState.Terminated.ContainerID != first {
		t.Errorf("lastState = %+v, want terminated %s", cs.LastTerminationState, first)
	}
	n.removeManifest("crash.yaml")
	n.waitNoPod(fullName("crash"))
}

func TestEditedManifestReplacesPod(t *testing.T) {
	n := newNode(t)
	n.start()
	n.writeManifest("edit.yaml", webPod("edit", "one"))
	old := n.waitPod(fullName("edit"), "running", running)
	n.writeManifest("edit.yaml", webPod("edit", "two"))
	pod := n.waitPod(fullName("edit"), "replaced and running", func(p *corev1.Pod) bool {
		return p.UID != old.UID && running(p)
	})
	n.waitFor("new pod serves the new body", func() bool {
		b, err := httpGet("http://" + pod.Status.PodIP + ":8080/")
		return err == nil && strings.TrimSpace(b) == "two"
	})
	c := runtimeClient(t)
	n.waitFor("old pod's sandbox and containers removed", func() bool {
		sb, cs := runtimeObjects(t, c, string(old.UID))
		return len(sb) == 0 && len(cs) == 0
	})
	n.removeManifest("edit.yaml")
	n.waitNoPod(fullName("edit"))
}

func TestRestartAdoptsRunningPods(t *testing.T) {
	n := newNode(t)
	n.start()
	n.writeManifest("adopt.yaml", webPod("adopt", "adopt"))
	pod := n.waitPod(fullName("adopt"), "running", running)
	c := runtimeClient(t)
	sbBefore, csBefore := runtimeObjects(t, c, string(pod.UID))
	n.stop()
	n.start()
	after := n.waitPod(fullName("adopt"), "running after restart", running)
	// Let several sync and housekeeping rounds pass before comparing.
	deadline := time.Now().Add(8 * time.Second)
	for time.Now().Before(deadline) {
		time.Sleep(pollInterval)
	}
	sbAfter, csAfter := runtimeObjects(t, c, string(pod.UID))
	if ids(sbBefore) != ids(sbAfter) || idsC(csBefore) != idsC(csAfter) {
		t.Errorf("runtime objects changed across restart:\nsandboxes %s -> %s\ncontainers %s -> %s",
			ids(sbBefore), ids(sbAfter), idsC(csBefore), idsC(csAfter))
	}
	if after.UID != pod.UID || after.Status.ContainerStatuses[0].RestartCount != 0 {
		t.Errorf("after restart: uid %s (was %s), restarts %d", after.UID, pod.UID, after.Status.ContainerStatuses[0].RestartCount)
	}
	n.removeManifest("adopt.yaml")
	n.waitNoPod(fullName("adopt"))
}

func TestBrokenManifestLeavesGoodPodRunning(t *testing.T) {
	n := newNode(t)
	n.start()
	n.writeManifest("good.yaml", webPod("good", "good"))
	good := n.waitPod(fullName("good"), "running", running)
	n.writeManifest("broken.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: broken\nspec: [")
	n.writeManifest("invalid.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: invalid}\nspec: {containers: []}\n")
	n.waitFor("berth logs the broken manifest", func() bool { return logContains(n, "broken.yaml") })
	n.waitFor("berth logs the invalid manifest", func() bool { return logContains(n, "invalid.yaml") })
	still := n.waitPod(fullName("good"), "still running", running)
	if still.UID != good.UID || still.Status.ContainerStatuses[0].ContainerID != good.Status.ContainerStatuses[0].ContainerID {
		t.Errorf("good pod disturbed: %s/%s -> %s/%s", good.UID, good.Status.ContainerStatuses[0].ContainerID,
			still.UID, still.Status.ContainerStatuses[0].ContainerID)
	}
	pods, err := n.pods()
	must(t, err)
	for _, p := range pods {
		if strings.HasPrefix(p.Name, "broken") || strings.HasPrefix(p.Name, "invalid") {
			t.Errorf("bad manifest became pod %s", p.Name)
		}
	}
	n.removeManifest("good.yaml")
	n.waitNoPod(fullName("good"))
}

func hasCondition(p *corev1.Pod, t corev1.PodConditionType, s corev1.ConditionStatus) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == t {
			return c.Status == s
		}
	}
	return false
}

func logContains(n *node, s string) bool {
	data, err := readFile(n.logPath)
	return err == nil && strings.Contains(data, s)
}

func ids(items []*runtimeapi.PodSandbox) string {
	var out []string
	for _, s := range items {
		out = append(out, s.Id+"/"+s.State.String())
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

func idsC(items []*runtimeapi.Container) string {
	var out []string
	for _, c := range items {
		out = append(out, c.Id+"/"+c.State.String())
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}
