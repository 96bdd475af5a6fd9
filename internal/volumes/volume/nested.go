package volume

import (
	"fmt"
	"path"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/volumes/atomicwriter"
)

// nestedMountpoints returns the directories, relative to the directory of
// the volume name, that the runtime needs as mount points for the volumes
// a container mounts beneath that volume: for every place a container
// (init, regular or ephemeral) mounts name, the mount paths nested under
// it, first level only (for /etc/app, /etc/app/data and /etc/app/data/x:
// "data"). It is upstream's getNestedMountpoints. A volume berth writes is
// mounted read-only, so the runtime cannot make these itself. Each one is
// checked as an item path (atomicwriter.CleanPath): a mount path such as
// /etc/app/..data must not become one of the writer's own names.
func nestedMountpoints(pod *corev1.Pod, name string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	for _, mounts := range allVolumeMounts(pod) {
		var all []string
		for _, m := range mounts {
			all = append(all, path.Clean(m.MountPath))
		}
		sort.Strings(all)
		for _, m := range mounts {
			if m.Name != name {
				continue
			}
			for _, rel := range nestedUnder(path.Clean(m.MountPath), all) {
				clean, err := atomicwriter.CleanPath(rel)
				if err != nil {
					return nil, fmt.Errorf("mount point %q nested in volume %q: %w", rel, name, err)
				}
				if !seen[clean] {
					seen[clean] = true
					out = append(out, clean)
				}
			}
		}
	}
	return out, nil
}

// nestedUnder returns the paths of sorted nested beneath mine, relative to
// it, leaving out those nested beneath another one of them.
func nestedUnder(mine string, sorted []string) []string {
	prefix := strings.TrimSuffix(mine, "/") + "/"
	var found, out []string
	for _, p := range sorted {
		if !strings.HasPrefix(p, prefix) {
			continue
		}
		deeper := false
		for _, f := range found {
			deeper = deeper || strings.HasPrefix(p, f+"/")
		}
		if deeper {
			continue
		}
		found = append(found, p)
		out = append(out, p[len(prefix):])
	}
	return out
}

// allVolumeMounts returns the volumeMounts of every container of the pod,
// one slice per container.
func allVolumeMounts(pod *corev1.Pod) [][]corev1.VolumeMount {
	var out [][]corev1.VolumeMount
	visitVolumeUses(pod, func(mounts []corev1.VolumeMount, _ []corev1.VolumeDevice) { out = append(out, mounts) })
	return out
}

// visitVolumeUses calls visit with the volumeMounts and volumeDevices of
// every container of the pod: init, regular and ephemeral, in that order.
func visitVolumeUses(pod *corev1.Pod, visit func([]corev1.VolumeMount, []corev1.VolumeDevice)) {
	for _, c := range pod.Spec.InitContainers {
		visit(c.VolumeMounts, c.VolumeDevices)
	}
	for _, c := range pod.Spec.Containers {
		visit(c.VolumeMounts, c.VolumeDevices)
	}
	for _, c := range pod.Spec.EphemeralContainers {
		visit(c.VolumeMounts, c.VolumeDevices)
	}
}
