package e2e

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// restartRulesPod: pod restartPolicy Never; "always" has a container-level
// restartPolicy Always and exits 0 after a second; "rules" has
// restartPolicy Never with a rule restarting it on exit code 42: its first
// run exits 42, its second 3 (an emptyDir remembers the first run).
func restartRulesPod(name string) string {
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
  containers:
  - name: always
    image: %[2]s
    imagePullPolicy: IfNotPresent
    restartPolicy: Always
    command: ["sh", "-c", "sleep 1; exit 0"]
  - name: rules
    image: %[2]s
    imagePullPolicy: IfNotPresent
    restartPolicy: Never
    restartPolicyRules:
    - action: Restart
      exitCodes:
        operator: In
        values: [42]
    command: ["sh", "-c", "if [ -e /data/ran ]; then exit 3; fi; touch /data/ran; exit 42"]
    volumeMounts:
    - name: data
      mountPath: /data
`, name, busybox)
}

// TestContainerRestartRules: per-container restartPolicy and
// restartPolicyRules decide over the pod's restartPolicy (ContainerRestartRules,
// on by default since v1.35), in what berth does and in what it reports.
func TestContainerRestartRules(t *testing.T) {
	n := newNode(t)
	n.start()
	n.writeManifest("rules.yaml", restartRulesPod("rules"))
	status := func(p *corev1.Pod, name string) *corev1.ContainerStatus {
		for i := range p.Status.ContainerStatuses {
			if p.Status.ContainerStatuses[i].Name == name {
				return &p.Status.ContainerStatuses[i]
			}
		}
		return nil
	}
	pod := n.waitPod(fullName("rules"), "both containers restarted per their own rules", func(p *corev1.Pod) bool {
		a, r := status(p, "always"), status(p, "rules")
		return a != nil && r != nil && a.RestartCount >= 1 &&
			r.RestartCount == 1 && r.State.Terminated != nil && r.State.Terminated.ExitCode == 3
	})
	if pod.Status.Phase != corev1.PodRunning {
		t.Errorf("phase = %s, want Running: container always restarts whatever the pod's policy", pod.Status.Phase)
	}
	n.removeManifest("rules.yaml")
	n.waitNoPod(fullName("rules"))
}
