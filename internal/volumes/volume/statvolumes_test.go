package volume

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/volumes/csi"
)

// TestStatVolumesOf: a claim's local and CSI volumes and an inline CSI
// volume report their usage through their plugin, with the claim's name
// (an ephemeral volume's is <pod>-<volume>), those of volumeMode Block
// too (a local one by its device, as upstream's metricsBlock; a CSI one
// by its driver at its block paths); a hostPath claim, a claim not set
// up and the other kinds do not.
func TestStatVolumesOf(t *testing.T) {
	pv := func(name string, src corev1.PersistentVolumeSource) *corev1.PersistentVolume {
		return &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: src}}
	}
	block := func(pv *corev1.PersistentVolume) *corev1.PersistentVolume {
		pv.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeBlock)
		return pv
	}
	pvc := func(claim string) corev1.VolumeSource {
		return corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "uid1"},
		Spec: corev1.PodSpec{Volumes: []corev1.Volume{
			{Name: "cache", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			{Name: "local", VolumeSource: pvc("local-claim")},
			{Name: "host", VolumeSource: pvc("host-claim")},
			{Name: "unused", VolumeSource: pvc("unused-claim")},
			{Name: "scratch", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}}},
			{Name: "inline", VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "csi.example.com"}}},
			{Name: "raw", VolumeSource: pvc("raw-claim")},
			{Name: "raw-csi", VolumeSource: pvc("raw-csi-claim")},
		}},
	}
	csiPV := pv("pv-csi", corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "csi.example.com", VolumeHandle: "h1"}})
	claims := map[string]*claimed{
		"local":   {volume: pv("pv-local", corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: "/mnt/disk"}})},
		"host":    {volume: pv("pv-host", corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/srv"}})},
		"scratch": {volume: csiPV, readOnly: true},
		"raw":     {volume: block(pv("pv-raw", corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: "/dev/sdb"}}))},
		"raw-csi": {volume: block(pv("pv-raw-csi", corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "csi.example.com", VolumeHandle: "h2"}}))},
	}
	got := statVolumesOf(pod, claims)
	want := []StatVolume{
		{Name: "local", Claim: "local-claim", LocalDir: "uid1/volumes/kubernetes.io~local-volume/pv-local"},
		{Name: "scratch", Claim: "web-scratch", CSI: &csi.Volume{SpecName: "pv-csi", Driver: "csi.example.com", Handle: "h1", ReadOnly: true}},
		{Name: "inline", CSI: &csi.Volume{SpecName: "inline", Driver: "csi.example.com", Inline: true}},
		{Name: "raw", Claim: "raw-claim", LocalDevice: "/dev/sdb"},
		{Name: "raw-csi", Claim: "raw-csi-claim", CSI: &csi.Volume{SpecName: "pv-raw-csi", Driver: "csi.example.com", Handle: "h2", Block: true}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stat volumes (-want +got):\n%s", diff)
	}
}
