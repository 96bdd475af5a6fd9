package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// restartAllPod: pod restartPolicy Never with an init container, a
// sidecar and two regular containers, each appending its name to
// /data/log (an emptyDir) when it starts. "src" restarts all containers
// when it exits 42: its first run exits 42 after a few seconds, its second
// runs on (the emptyDir remembers the first run).
func restartAllPod(name string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  volumes:
  - name: data
    emptyDir: {}
  initContainers:
  - name: init
    image: %[2]s
    imagePullPolicy: IfNotPresent
    command: ["sh", "-c", "echo init >> /data/log"]
    volumeMounts:
    - {name: data, mountPath: /data}
  - name: sidecar
    image: %[2]s
    imagePullPolicy: IfNotPresent
    restartPolicy: Always
    command: ["sh", "-c", "echo sidecar >> /data/log; exec sleep 3600"]
    volumeMounts:
    - {name: data, mountPath: /data}
  containers:
  - name: src
    image: %[2]s
    imagePullPolicy: IfNotPresent
    restartPolicy: Never
    restartPolicyRules:
    - action: RestartAllContainers
      exitCodes:
        operator: In
        values: [42]
    command: ["sh", "-c", "echo src >> /data/log; if [ -e /data/ran ]; then exec sleep 3600; fi; touch /data/ran; sleep 6; exit 42"]
    volumeMounts:
    - {name: data, mountPath: /data}
  - name: web
    image: %[2]s
    imagePullPolicy: IfNotPresent
    command: ["sh", "-c", "echo web >> /data/log; exec sleep 3600"]
    volumeMounts:
    - {name: data, mountPath: /data}
`, name, busybox)
}

// allStatuses returns the pod's init and regular container statuses by name.
func allStatuses(p *corev1.Pod) map[string]corev1.ContainerStatus {
	out := map[string]corev1.ContainerStatus{}
	for _, s := range append(slices.Clone(p.Status.InitContainerStatuses), p.Status.ContainerStatuses...) {
		out[s.Name] = s
	}
	return out
}

func conditionStatus(p *corev1.Pod, t corev1.PodConditionType) corev1.ConditionStatus {
	for _, c := range p.Status.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return ""
}

// TestRestartAllContainers: a container exiting with a code its
// RestartAllContainers rule matches restarts every container of the pod
// (RestartAllContainersOnContainerExits, beta and on by default since
// v1.36): init container, sidecar and regular containers run again, in
// order, from the first init container, in the same sandbox; each counts
// one restart, and the pod is Running again with AllContainersRestarting
// False.
func TestRestartAllContainers(t *testing.T) {
	n := newNode(t)
	n.start()
	n.writeManifest("restartall.yaml", restartAllPod("restartall"))
	c := runtimeClient(t)

	// Before src exits: everything started once.
	first := n.waitPod(fullName("restartall"), "running, nothing restarted", func(p *corev1.Pod) bool {
		s := allStatuses(p)
		return running(p) && s["sidecar"].State.Running != nil && s["src"].RestartCount == 0
	})
	uid := string(first.UID)
	sandboxes, _ := runtimeObjects(t, c, uid)
	if len(sandboxes) != 1 {
		t.Fatalf("sandboxes before the restart: %d, want 1", len(sandboxes))
	}
	oldIDs := map[string]string{}
	for name, s := range allStatuses(first) {
		oldIDs[name] = s.ContainerID
	}

	names := []string{"init", "sidecar", "src", "web"}
	pod := n.waitPod(fullName("restartall"), "every container restarted once, running again", func(p *corev1.Pod) bool {
		s := allStatuses(p)
		for _, name := range names {
			if s[name].RestartCount != 1 || s[name].LastTerminationState.Terminated == nil {
				return false
			}
		}
		return running(p) && s["sidecar"].State.Running != nil &&
			s["init"].State.Terminated != nil && s["init"].State.Terminated.ExitCode == 0
	})
	if pod.UID != first.UID {
		t.Fatalf("the pod was replaced: UID %s, then %s", first.UID, pod.UID)
	}
	if got := conditionStatus(pod, corev1.AllContainersRestarting); got != corev1.ConditionFalse {
		t.Errorf("AllContainersRestarting = %q, want False", got)
	}
	if pod.Status.Phase != corev1.PodRunning {
		t.Errorf("phase = %s, want Running", pod.Status.Phase)
	}
	if pod.Status.PodIP != first.Status.PodIP {
		t.Errorf("pod IP %s, then %s: want the same sandbox", first.Status.PodIP, pod.Status.PodIP)
	}
	for name, s := range allStatuses(pod) {
		if s.ContainerID == "" || s.ContainerID == oldIDs[name] {
			t.Errorf("%s: container ID %q, was %q: want a new container", name, s.ContainerID, oldIDs[name])
		}
	}
	// The reset removed the old containers; the new ones run in the
	// sandbox the pod had.
	after, containers := runtimeObjects(t, c, uid)
	if len(after) != 1 || after[0].Id != sandboxes[0].Id {
		t.Errorf("sandboxes after the restart: %d, want the one before (%s)", len(after), sandboxes[0].Id)
	}
	if len(containers) != len(names) {
		t.Errorf("the runtime holds %d containers, want %d (the old ones removed)", len(containers), len(names))
	}
	for _, ctr := range containers {
		if ctr.PodSandboxId != sandboxes[0].Id {
			t.Errorf("container %s in sandbox %s, want %s", ctr.Metadata.Name, ctr.PodSandboxId, sandboxes[0].Id)
		}
	}
	// Everything started twice, in order, from the first init container.
	logPath := filepath.Join(n.rootDir, "pods", uid, "volumes", "kubernetes.io~empty-dir", "data", "log")
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatalf("read the start log: %v", err)
	}
	lines := strings.Fields(string(b))
	if len(lines) != 8 {
		t.Fatalf("start log = %q, want each container twice", lines)
	}
	for i, run := range [][]string{lines[:4], lines[4:]} {
		regular := slices.Clone(run[2:])
		slices.Sort(regular)
		if run[0] != "init" || run[1] != "sidecar" || !slices.Equal(regular, []string{"src", "web"}) {
			t.Errorf("run %d started %q, want init, sidecar, then src and web", i+1, run)
		}
	}
	n.removeManifest("restartall.yaml")
	n.waitNoPod(fullName("restartall"))
}
