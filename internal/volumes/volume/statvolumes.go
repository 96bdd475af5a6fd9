package volume

import (
	"path/filepath"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berthk8s/berth/internal/volumes/csi"
)

// StatVolume is a set-up volume whose usage its plugin reports rather
// than a walk of its directory (upstream's volume plugins with a
// MetricsProvider other than du): a claim's local or CSI persistent
// volume, or an inline CSI volume. A claim bound to a hostPath volume has
// none, as upstream's hostPath plugin (MetricsNil).
type StatVolume struct {
	// Name is the pod's name of the volume.
	Name string
	// Claim names the claim of a persistentVolumeClaim or generic
	// ephemeral volume (<pod>-<volume>), as upstream's pvcRef; "" for an
	// inline CSI volume.
	Claim string
	// LocalDir is a local persistent volume's mount point below PodsDir
	// (<uid>/volumes/kubernetes.io~local-volume/<pv name>), "" otherwise:
	// its filesystem (statfs) is its usage, as upstream's local plugin.
	LocalDir string
	// LocalDevice is the device of a local persistent volume of
	// volumeMode Block (the PersistentVolume's path, which the pod's link
	// names), "" otherwise: its size is its capacity, the only figure, as
	// upstream's local block mapper (metricsBlock).
	LocalDevice string
	// CSI is a CSI volume (persistent or inline, csi.Volume.Block for
	// one of volumeMode Block), whose driver says its usage
	// (csi.Mounter.VolumeStats); nil otherwise.
	CSI *csi.Volume
}

// PodStatVolumes are one pod's StatVolumes.
type PodStatVolumes struct {
	UID       types.UID
	Namespace string
	Volumes   []StatVolume
}

// statVolumesOf lists the StatVolumes of pod whose claims are resolved
// (claims, by the pod's volume name), in the pod's order. It is pure.
func statVolumesOf(pod *corev1.Pod, claims map[string]*claimed) []StatVolume {
	var out []StatVolume
	for _, v := range pod.Spec.Volumes {
		kind, err := Classify(v)
		if err != nil {
			continue
		}
		switch kind {
		case KindCSI:
			c := inlineCSI(pod, v)
			out = append(out, StatVolume{Name: v.Name, CSI: &c})
		case KindClaim:
			c := claims[v.Name]
			if c == nil {
				continue // not used by any container (not set up)
			}
			name, _, _ := claimName(pod, v)
			sv := StatVolume{Name: v.Name, Claim: name}
			switch src := c.volume.Spec.PersistentVolumeSource; {
			case src.Local != nil && isBlock(c.volume):
				sv.LocalDevice = src.Local.Path
			case src.Local != nil:
				sv.LocalDir = filepath.Join(string(pod.UID), "volumes", localVolumePlugin, c.volume.Name)
			case src.CSI != nil:
				cv := persistentCSI(c)
				sv.CSI = &cv
			default:
				continue
			}
			out = append(out, sv)
		}
	}
	return out
}

// StatVolumes returns the StatVolumes of every pod whose volumes are set
// up, by pod UID order. It never waits for a set-up in progress: each
// pod's list is the one its last successful SetUp published. Safe for
// concurrent use.
func (m *Manager) StatVolumes() []PodStatVolumes {
	m.mu.Lock()
	out := make([]PodStatVolumes, 0, len(m.pods))
	for _, st := range m.pods {
		if p := st.stats.Load(); p != nil && len(p.Volumes) > 0 {
			out = append(out, *p)
		}
	}
	m.mu.Unlock()
	slices.SortFunc(out, func(a, b PodStatVolumes) int { return strings.Compare(string(a.UID), string(b.UID)) })
	return out
}

// publishStats records the StatVolumes of a pod just set up; st.mu is
// held.
func (st *podState) publishStats(pod *corev1.Pod) {
	st.stats.Store(&PodStatVolumes{UID: pod.UID, Namespace: pod.Namespace, Volumes: statVolumesOf(pod, st.claims)})
}
