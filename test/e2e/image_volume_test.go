package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// imageVolumeManifest is a static pod mounting the busybox image as an
// image volume at /vol and its bin directory (subPath) at /sub; its
// container reports to out (a host directory) what it sees, and whether
// it can write to the volume.
func imageVolumeManifest(name, reference string, policy corev1.PullPolicy, out string) string {
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Volumes: []corev1.Volume{
				{Name: "image", VolumeSource: corev1.VolumeSource{Image: &corev1.ImageVolumeSource{Reference: reference, PullPolicy: policy}}},
				{Name: "out", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: out}}},
			},
			Containers: []corev1.Container{{
				Name: "app", Image: busybox, ImagePullPolicy: corev1.PullIfNotPresent,
				Command: []string{"sh", "-c", `ls /vol/bin/busybox /sub/busybox > /out/seen 2>&1
if touch /vol/written 2>/dev/null; then echo writable; else echo read-only; fi > /out/mode
exec sleep 3600`},
				VolumeMounts: []corev1.VolumeMount{
					{Name: "image", MountPath: "/vol"},
					{Name: "image", MountPath: "/sub", SubPath: "bin"},
					{Name: "out", MountPath: "/out"},
				},
			}},
		},
	}
	b, err := json.Marshal(pod)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// TestImageVolumes runs image volumes on containerd 2: the busybox image
// mounted read-only, whole and by subPath; berth restarted under the pod
// restarts no container; an image volume absent with pull policy Never
// holds its container with ErrImageNeverPull, as upstream.
func TestImageVolumes(t *testing.T) {
	ctrd := startContainerd2(t)
	n := newNode(t)
	useRuntime(t, n, ctrd.endpoint)
	n.start()
	out := t.TempDir()

	n.writeManifest("imgvol.json", imageVolumeManifest("imgvol", busybox, corev1.PullIfNotPresent, out))
	running := n.waitPod("imgvol-"+nodeName, "running", func(p *corev1.Pod) bool {
		return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Running != nil
	})
	id := running.Status.ContainerStatuses[0].ContainerID
	read := func(file string) string {
		b, _ := os.ReadFile(filepath.Join(out, file))
		return strings.TrimSpace(string(b))
	}
	n.waitFor("the container's report", func() bool { return read("mode") != "" })
	if seen := read("seen"); seen != "/sub/busybox\n/vol/bin/busybox" {
		t.Errorf("the container saw %q, want the image's /bin/busybox at /vol/bin and /sub", seen)
	}
	if mode := read("mode"); mode != "read-only" {
		t.Errorf("the image volume is %s, want read-only", mode)
	}

	n.stop()
	n.start()
	again := n.waitPod("imgvol-"+nodeName, "running after berth restarted", func(p *corev1.Pod) bool {
		return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Running != nil
	})
	if cs := again.Status.ContainerStatuses[0]; cs.ContainerID != id || cs.RestartCount != 0 {
		t.Errorf("after berth restarted: container %s (restarts %d), want %s not restarted", cs.ContainerID, cs.RestartCount, id)
	}

	n.writeManifest("absent.json", imageVolumeManifest("absent", "example.test/absent:v1", corev1.PullNever, t.TempDir()))
	n.waitPod("absent-"+nodeName, "waiting with ErrImageNeverPull", func(p *corev1.Pod) bool {
		if len(p.Status.ContainerStatuses) != 1 {
			return false
		}
		w := p.Status.ContainerStatuses[0].State.Waiting
		return w != nil && w.Reason == "ErrImageNeverPull" &&
			w.Message == `Container image "example.test/absent:v1" is not present with pull policy of Never`
	})

	n.removeManifest("imgvol.json")
	n.removeManifest("absent.json")
	n.waitNoPod("imgvol-" + nodeName)
	n.waitNoPod("absent-" + nodeName)
}

// TestImageVolumeOnContainerd16: containerd 1.6 cannot mount images (it
// drops the CRI mount's image and finds no host path); the pod's container
// does not start, with the runtime's refusal as its CreateContainerError
// message, as on the upstream kubelet.
func TestImageVolumeOnContainerd16(t *testing.T) {
	n := newNode(t)
	n.start()
	n.writeManifest("imgvol.json", imageVolumeManifest("imgvol16", busybox, corev1.PullIfNotPresent, t.TempDir()))
	p := n.waitPod("imgvol16-"+nodeName, "refused by the runtime", func(p *corev1.Pod) bool {
		if len(p.Status.ContainerStatuses) != 1 {
			return false
		}
		w := p.Status.ContainerStatuses[0].State.Waiting
		return w != nil && w.Reason == "CreateContainerError"
	})
	if msg := p.Status.ContainerStatuses[0].State.Waiting.Message; !strings.Contains(msg, `failed to mkdir ""`) {
		t.Errorf("containerd 1.6 refused the container with %q, want its refusal of the image mount (failed to mkdir \"\")", msg)
	}
	n.removeManifest("imgvol.json")
	n.waitNoPod("imgvol16-" + nodeName)
}
