package e2e

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestUnsafeSysctlRejectedAtAdmission is upstream's "Sysctls should not
// launch unsafe, but not explicitly enabled sysctls on the node": a pod
// setting kernel.msgmax, which allowedUnsafeSysctls does not allow, is
// rejected at admission (Failed, SysctlForbidden, upstream's message) and
// nothing of it reaches the runtime.
func TestUnsafeSysctlRejectedAtAdmission(t *testing.T) {
	n := newNode(t)
	n.writeManifest("pod.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: unsafe-sysctl
spec:
  securityContext:
    sysctls:
    - {name: kernel.msgmax, value: "10000000000"}
  containers:
  - name: test
    image: %s
    imagePullPolicy: IfNotPresent
    command: ["sleep", "3600"]
`, busybox))
	n.start()
	pod := n.waitPod(fullName("unsafe-sysctl"), "failed", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
	if want := `Pod was rejected: forbidden sysctl: "kernel.msgmax" not allowlisted`; pod.Status.Reason != "SysctlForbidden" || pod.Status.Message != want {
		t.Errorf("status reason %q message %q; want SysctlForbidden, %q", pod.Status.Reason, pod.Status.Message, want)
	}
	sandboxes, containers := runtimeObjects(t, runtimeClient(t), string(pod.UID))
	if len(sandboxes) != 0 || len(containers) != 0 {
		t.Errorf("a rejected pod has %d sandboxes and %d containers in the runtime", len(sandboxes), len(containers))
	}
}
