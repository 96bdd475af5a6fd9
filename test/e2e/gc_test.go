package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// TestContainerGC runs a static pod whose container always fails: with
// the default policy (--maximum-dead-containers-per-container 1) the
// container GC, every minute, removes every exited instance but the newest,
// with its log file, in containerd.
func TestContainerGC(t *testing.T) {
	n := newNode(t)
	n.start()
	n.writeManifest("crasher.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: crasher
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: %s
    imagePullPolicy: IfNotPresent
    command: ["sh", "-c", "echo failing; exit 1"]
`, busybox))
	pod := n.waitPod(fullName("crasher"), "started", func(p *corev1.Pod) bool { return len(p.Status.ContainerStatuses) > 0 })
	c := runtimeClient(t)
	uid := string(pod.UID)
	logDir := filepath.Join("/var/log/pods", pod.Namespace+"_"+pod.Name+"_"+uid, "main")
	exited := func() []*runtimeapi.Container {
		_, cs := runtimeObjects(t, c, uid)
		var out []*runtimeapi.Container
		for _, ctr := range cs {
			if ctr.GetState() == runtimeapi.ContainerState_CONTAINER_EXITED {
				out = append(out, ctr)
			}
		}
		return out
	}
	// The pod path removes no exited instance: they pile up until the GC.
	n.waitFor("three exited instances", func() bool { return len(exited()) >= 3 })
	logsBefore := logFiles(t, logDir)
	if len(logsBefore) < 3 {
		t.Fatalf("log files %v, want one per instance", logsBefore)
	}
	n.waitFor("the container GC to keep only the newest exited instance", func() bool { return len(exited()) == 1 })
	newest := exited()[0]
	st, err := c.Runtime.ContainerStatus(context.Background(), &runtimeapi.ContainerStatusRequest{ContainerId: newest.GetId()})
	must(t, err)
	want := filepath.Base(st.GetStatus().GetLogPath())
	logsAfter := logFiles(t, logDir)
	if !slices.Contains(logsAfter, want) {
		t.Errorf("log files %v lack the newest exited instance's %s", logsAfter, want)
	}
	// The newest exited instance and at most one started since keep their
	// logs; the first instance's log went with it.
	if len(logsAfter) > 2 {
		t.Errorf("log files %v, want the removed instances' logs gone", logsAfter)
	}
	if want != "0.log" && slices.Contains(logsAfter, "0.log") {
		t.Errorf("log files %v: the first instance's log is still there", logsAfter)
	}
}
