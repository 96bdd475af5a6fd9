package volume

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// TestRelabel pins upstream's per-plugin SELinux attributes
// (pkg/volume/*: GetAttributes, Managed && SELinuxRelabel), which decide
// the CRI mount's selinux_relabel: the volumes berth makes always; a
// local PV unless read-only; a CSI volume unless read-only and only on a
// labelled filesystem; hostPath, nfs, an image and a hostPath or nfs PV
// never.
func TestRelabel(t *testing.T) {
	pv := func(src corev1.PersistentVolumeSource) *claimed {
		return &claimed{volume: &corev1.PersistentVolume{Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: src}}}
	}
	local := pv(corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: "/mnt/disk"}})
	csiPV := pv(corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "d", VolumeHandle: "1"}})
	hostPV := pv(corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/srv"}})
	nfsPV := pv(corev1.PersistentVolumeSource{NFS: &corev1.NFSVolumeSource{Server: "s", Path: "/e"}})
	inlineCSI := corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "d"}}
	for _, tc := range []struct {
		name     string
		src      corev1.VolumeSource
		claim    *claimed
		labelled bool
		want     bool
	}{
		{"emptyDir", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}, nil, false, true},
		{"emptyDir in memory", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}, nil, false, true},
		{"configMap (read-only, still managed)", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{}}, nil, false, true},
		{"secret", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{}}, nil, false, true},
		{"downwardAPI", corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{}}, nil, false, true},
		{"projected", corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{}}, nil, false, true},
		{"hostPath", corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/srv"}}, nil, true, false},
		{"nfs", corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{Server: "s", Path: "/e"}}, nil, true, false},
		{"image", corev1.VolumeSource{Image: &corev1.ImageVolumeSource{Reference: "busybox"}}, nil, true, false},
		{"inline CSI on a labelled filesystem", inlineCSI, nil, true, true},
		{"inline CSI on a filesystem without labels", inlineCSI, nil, false, false},
		{"inline CSI read-only", corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "d", ReadOnly: ptr.To(true)}}, nil, true, false},
		{"claim of a local PV", pvcSource("c", false), local, false, true},
		{"claim of a local PV, read-only", pvcSource("c", true), local, false, false},
		{"claim of a CSI PV, labelled", pvcSource("c", false), csiPV, true, true},
		{"claim of a CSI PV, not labelled", pvcSource("c", false), csiPV, false, false},
		{"claim of a CSI PV, read-only", pvcSource("c", true), csiPV, true, false},
		{"claim of a hostPath PV", pvcSource("c", false), hostPV, true, false},
		{"claim of an nfs PV", pvcSource("c", false), nfsPV, true, false},
		{"generic ephemeral on a local PV", corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}}, local, false, true},
		{"fc", corev1.VolumeSource{FC: &corev1.FCVolumeSource{WWIDs: []string{"w"}}}, nil, false, true},
		{"fc read-only", corev1.VolumeSource{FC: &corev1.FCVolumeSource{WWIDs: []string{"w"}, ReadOnly: true}}, nil, false, false},
		{"claim of an fc PV", pvcSource("c", false), pv(corev1.PersistentVolumeSource{FC: &corev1.FCVolumeSource{WWIDs: []string{"w"}}}), false, true},
		{"claim not resolved", pvcSource("c", false), nil, true, false},
		{"unsupported type", corev1.VolumeSource{ISCSI: &corev1.ISCSIVolumeSource{}}, nil, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := relabel(corev1.Volume{Name: "v", VolumeSource: tc.src}, tc.claim, func() bool { return tc.labelled })
			if got != tc.want {
				t.Errorf("relabel() = %v, want %v", got, tc.want)
			}
		})
	}
}

// fakeLabels answers Supports from a table of directories.
type fakeLabels map[string]bool

func (f fakeLabels) Supports(dir string) (bool, error) {
	ok, known := f[dir]
	if !known {
		return false, errors.New("no mount")
	}
	return ok, nil
}

// TestRelabeledVolumes: the manager names the set-up volumes to relabel,
// asking the host about the directory of each CSI volume only, and
// nothing of a volume not set up; with no SELinux host (Config.SELinux
// nil) a CSI volume is not relabelled.
func TestRelabeledVolumes(t *testing.T) {
	pod := testPod()
	pod.Spec.Volumes = []corev1.Volume{
		{Name: "cache", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/srv"}}},
		{Name: "csi-on", VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "d"}}},
		{Name: "csi-off", VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "d"}}},
		{Name: "csi-unknown", VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "d"}}},
		{Name: "not-set-up", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}
	dirs := map[string]string{"cache": "/p/cache", "host": "/srv", "csi-on": "/p/on", "csi-off": "/p/off", "csi-unknown": "/p/unknown"}
	e := newEnv(t)
	e.m.cfg.SELinux = fakeLabels{"/p/on": true, "/p/off": false}
	got := e.m.RelabeledVolumes(context.Background(), pod, dirs)
	if diff := cmp.Diff(map[string]bool{"cache": true, "csi-on": true}, got); diff != "" {
		t.Errorf("RelabeledVolumes() (-want +got):\n%s", diff)
	}
	e.m.cfg.SELinux = nil
	got = e.m.RelabeledVolumes(context.Background(), pod, dirs)
	if len(got) != 0 {
		t.Errorf("RelabeledVolumes() without SELinux = %v, want none (upstream: && selinux.GetEnabled())", got)
	}
}
