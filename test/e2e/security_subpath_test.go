package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"
)

const (
	raceConsumers = 12
	raceDuration  = 40 * time.Second
)

// subPathRacePod is a static pod whose "flip" container turns /data/d back
// and forth between a directory and a symlink to hostDir, by renames that
// never delete the directory (a bind of a deleted directory cannot be
// mounted, which would fail starts for another reason), while the consumer
// containers, which mount the subPath d, start. Each consumer start
// appends to /out/<its name> whether it sees hostDir's marker.
func subPathRacePod(hostDir string) string {
	flip := fmt.Sprintf(`exec 2>/dev/null; mkdir -p /data/real; touch /data/real/inside
while :; do mv /data/d /data/real; ln -s %s /data/d; rm /data/d; mv /data/real /data/d; done`, hostDir)
	pod := corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "subpath-race"},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Volumes: []corev1.Volume{
				{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "out", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			},
			Containers: []corev1.Container{{
				Name: "flip", Image: busybox, ImagePullPolicy: corev1.PullIfNotPresent,
				Command:      []string{"sh", "-c", flip},
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
			}},
		},
	}
	for i := range raceConsumers {
		name := fmt.Sprintf("c%d", i)
		check := fmt.Sprintf(`if [ -e /sub/host-marker ]; then echo escaped >> /out/%[1]s; else echo safe >> /out/%[1]s; fi; exec sleep 3600`, name)
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{
			Name: name, Image: busybox, ImagePullPolicy: corev1.PullIfNotPresent,
			Command: []string{"sh", "-c", check},
			VolumeMounts: []corev1.VolumeMount{
				{Name: "data", MountPath: "/sub", SubPath: "d"},
				{Name: "out", MountPath: "/out"},
			},
		})
	}
	b, err := json.Marshal(pod)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// TestSubPathSwapNeverMountsTheHost is CVE-2017-1002101 and
// CVE-2021-25741 on real containerd: a container of the pod swaps a
// subPath directory for a symlink to a host directory in a tight loop
// while containers mounting that subPath start (and, refused, start again). No container
// ever sees the host directory; a start that meets the symlink fails with
// CreateContainerConfigError; the runtime only ever gets binds under the
// pod's volume-subpaths; removing the pod leaves the host directory alone.
func TestSubPathSwapNeverMountsTheHost(t *testing.T) {
	n := newNode(t)
	n.start()
	hostDir := t.TempDir()
	marker := filepath.Join(hostDir, "host-marker")
	must(t, os.WriteFile(marker, []byte("host"), 0o644))
	n.writeManifest("subpath-race.json", subPathRacePod(hostDir))
	pod := n.waitPod(fullName("subpath-race"), "flipping", func(p *corev1.Pod) bool {
		for _, c := range p.Status.ContainerStatuses {
			if c.Name == "flip" && c.State.Running != nil {
				return true
			}
		}
		return false
	})
	reasons := watchConsumerReasons(t, n, pod.Name, raceDuration)
	t.Logf("consumer waiting reasons seen: %v", reasons)
	for reason := range reasons {
		switch reason {
		case "ContainerCreating", "CreateContainerConfigError":
		default:
			t.Errorf("a consumer waited with reason %q: only CreateContainerConfigError may refuse a subPath", reason)
		}
	}
	podDir := filepath.Join(n.rootDir, "pods", string(pod.UID))
	starts := checkVerdicts(t, filepath.Join(podDir, "volumes", "kubernetes.io~empty-dir", "out"))
	t.Logf("%d consumer starts checked their subPath, %d CreateContainerConfigError observations", starts, reasons["CreateContainerConfigError"])
	logData, err := readFile(n.logPath)
	must(t, err)
	refused := strings.Count(logData, "CreateContainerConfigError: prepare subPath")
	t.Logf("berth bound %d subPaths and refused %d starts", strings.Count(logData, "Bound subPath"), refused)
	if starts == 0 || refused == 0 {
		t.Error("no consumer started, or none was refused: the race was not exercised")
	}
	checkSubPathMounts(t, string(pod.UID), filepath.Join(podDir, "volume-subpaths")+"/")
	n.removeManifest("subpath-race.json")
	n.waitNoPod(pod.Name)
	n.waitFor("pod directory removed", func() bool {
		_, err := os.Stat(podDir)
		return os.IsNotExist(err)
	})
	if got, err := os.ReadFile(marker); err != nil || string(got) != "host" {
		t.Errorf("host marker after the pod's removal = %q, %v", got, err)
	}
}

// watchConsumerReasons polls the pod until every consumer has started or d
// passed, and counts the waiting reasons of its consumer containers.
func watchConsumerReasons(t *testing.T, n *node, name string, d time.Duration) map[string]int {
	t.Helper()
	reasons := map[string]int{}
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(pollInterval) {
		pods, err := n.pods()
		if err != nil {
			continue
		}
		started := 0
		for _, p := range pods {
			if p.Name != name {
				continue
			}
			for _, c := range p.Status.ContainerStatuses {
				switch {
				case c.Name == "flip":
				case c.State.Waiting != nil:
					reasons[c.State.Waiting.Reason]++
				case c.State.Running != nil || c.State.Terminated != nil:
					started++
				}
			}
		}
		if started == raceConsumers {
			break
		}
	}
	return reasons
}

// checkVerdicts reads what the consumers wrote and returns how many starts
// wrote; any "escaped" fails the test.
func checkVerdicts(t *testing.T, outDir string) int {
	t.Helper()
	entries, err := os.ReadDir(outDir)
	must(t, err)
	starts := 0
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(outDir, e.Name()))
		must(t, err)
		for _, line := range strings.Fields(string(b)) {
			starts++
			if line != "safe" {
				t.Errorf("consumer %s saw the host directory through its subPath: %q", e.Name(), line)
			}
		}
	}
	return starts
}

// checkSubPathMounts asks containerd which host path each consumer's /sub
// came from: always a bind under the pod's volume-subpaths.
func checkSubPathMounts(t *testing.T, uid, bindDir string) {
	t.Helper()
	c := runtimeClient(t)
	_, containers := runtimeObjects(t, c, uid)
	for _, ctr := range containers {
		st, err := c.Runtime.ContainerStatus(context.Background(), &runtimeapi.ContainerStatusRequest{ContainerId: ctr.GetId()})
		must(t, err)
		for _, m := range st.GetStatus().GetMounts() {
			if m.GetContainerPath() == "/sub" && !strings.HasPrefix(m.GetHostPath(), bindDir) {
				t.Errorf("container %s mounts /sub from %q, not from a bind under %q", ctr.GetMetadata().GetName(), m.GetHostPath(), bindDir)
			}
		}
	}
}
