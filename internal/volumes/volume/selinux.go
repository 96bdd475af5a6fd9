package volume

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// SELinuxHost is what the volume manager asks of the host's SELinux
// (platform/selinux.Host): whether the filesystem of a path carries
// labels, false wherever SELinux is off.
type SELinuxHost interface {
	Supports(path string) (bool, error)
}

// RelabeledVolumes returns the names of the pod's set-up volumes whose
// mounts the container runtime relabels for SELinux (the CRI mount's
// selinux_relabel), as upstream's makeMounts decides from each mounter's
// attributes (Managed && SELinuxRelabel; relabel below). Where SELinux is
// off (Config.SELinux nil) none is, as upstream's kuberuntime makeMounts
// passes a relabel on only when selinux.GetEnabled(). dirs are the
// volumes' host directories, as SetUp returned them.
func (m *Manager) RelabeledVolumes(ctx context.Context, pod *corev1.Pod, dirs map[string]string) map[string]bool {
	if m.cfg.SELinux == nil {
		return nil
	}
	m.mu.Lock()
	st := m.pods[pod.UID]
	m.mu.Unlock()
	claims := map[string]*claimed{}
	if st != nil {
		st.mu.Lock()
		for name, c := range st.claims {
			claims[name] = c
		}
		st.mu.Unlock()
	}
	labelled := func(dir string) bool {
		if dir == "" {
			return false
		}
		ok, err := m.cfg.SELinux.Supports(dir)
		if err != nil {
			klog.FromContext(ctx).V(2).Info("Cannot tell whether a volume carries SELinux labels; not relabelling it", "pod", klog.KObj(pod), "dir", dir, "err", err)
		}
		return ok
	}
	out := map[string]bool{}
	for _, v := range pod.Spec.Volumes {
		dir, ok := dirs[v.Name]
		if !ok {
			continue
		}
		if relabel(v, claims[v.Name], func() bool { return labelled(dir) }) {
			out[v.Name] = true
		}
	}
	return out
}

// relabel is whether the runtime relabels the mounts of v, upstream's
// per-plugin attributes (pkg/volume/*: GetAttributes): always for the
// volumes berth makes (emptyDir, configMap, secret, downwardAPI,
// projected) and a local persistent volume the pod may write; never for
// hostPath, nfs or an image (the host's or the server's labels stay);
// for a CSI volume the pod may write, when its filesystem carries labels
// (labelled: upstream's GetSELinuxSupport of the published directory),
// since berth does not mount with an SELinux context (seLinuxMount).
// c is the claim of a persistentVolumeClaim or ephemeral volume. It is
// pure but for labelled.
func relabel(v corev1.Volume, c *claimed, labelled func() bool) bool {
	kind, err := Classify(v)
	if err != nil {
		return false
	}
	writable := !ForcedReadOnly(v)
	switch kind {
	case KindEmptyDir, KindConfigMap, KindSecret, KindDownwardAPI, KindProjected:
		return true
	case KindFC:
		return writable
	case KindCSI, KindMigrated:
		return writable && labelled()
	case KindClaim:
		if c == nil || c.volume == nil {
			return false
		}
		switch s := c.volume.Spec.PersistentVolumeSource; {
		case s.Local != nil, s.FC != nil:
			return writable
		case s.CSI != nil:
			return writable && labelled()
		}
	}
	return false
}
