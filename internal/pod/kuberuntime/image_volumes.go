package kuberuntime

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// imageVolumes makes sure the images of the image volumes container c
// mounts are present, with their pull policies, the pod's pull secrets,
// the pull records and the pod's pull back-off (ensureImage), and returns
// them by volume name as the runtime mounts them (upstream getImageVolumes
// and toKubeContainerImageVolumes). Only the volumes c mounts are pulled:
// upstream pulls every image volume of the pod and ignores the failures of
// those no container mounts, berth does not pull them at all.
//
// A failure is the pull's (ErrImagePull, ImagePullBackOff, ...), and the
// container does not start, as upstream.
func (m *Manager) imageVolumes(ctx context.Context, t startTarget) (map[string]*runtimeapi.ImageSpec, *runtimestate.StartFailure) {
	pod, c := t.Pod, t.Container
	var out map[string]*runtimeapi.ImageSpec
	for _, v := range pod.Spec.Volumes {
		if v.Image == nil || !mountsVolume(c, v.Name) {
			continue
		}
		ref, failure := m.ensureImage(ctx, t.Pulls, pod, imageUse{Image: v.Image.Reference, Policy: v.Image.PullPolicy}, t.SandboxCfg)
		if failure != nil {
			return nil, failure
		}
		if out == nil {
			out = map[string]*runtimeapi.ImageSpec{}
		}
		out[v.Name] = &runtimeapi.ImageSpec{Image: ref, UserSpecifiedImage: v.Image.Reference, Annotations: pod.Annotations}
	}
	return out, nil
}

// imageMounts counts the volumeMounts of c of a volume in images.
func imageMounts(c *corev1.Container, images map[string]*runtimeapi.ImageSpec) int {
	n := 0
	for _, vm := range c.VolumeMounts {
		if images[vm.Name] != nil {
			n++
		}
	}
	return n
}

// mountsVolume reports whether c has a volumeMount of the volume name.
func mountsVolume(c *corev1.Container, name string) bool {
	for _, vm := range c.VolumeMounts {
		if vm.Name == name {
			return true
		}
	}
	return false
}
