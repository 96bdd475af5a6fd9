package volume

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/berthk8s/berth/internal/volumes/csi"
)

// TestMigratedClaim: a claim bound to an in-tree awsElasticBlockStore
// volume is served by the EBS CSI driver with the handle, fsType and
// access modes the translation gives (the attach/detach controller's and
// the external attacher's), and the claim's readOnly; mounted at the PV's
// CSI directory.
func TestMigratedClaim(t *testing.T) {
	pvc, pv := boundClaim("c", "pv-ebs", corev1.PersistentVolumeSource{AWSElasticBlockStore: &corev1.AWSElasticBlockStoreVolumeSource{
		VolumeID: "aws://us-east-1a/vol-0123", FSType: "ext4",
	}})
	e, f := csiEnv(t, csi.Published{})
	for _, o := range []runtime.Object{pvc, pv} {
		if err := e.client.Tracker().Add(o); err != nil {
			t.Fatal(err)
		}
	}
	paths, err := e.m.SetUp(context.Background(), claimPod(pvcSource("c", true)))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(e.dir, "uid-1", "volumes", "kubernetes.io~csi", "pv-ebs", "mount"); paths["data"] != want {
		t.Errorf("SetUp() paths = %v, want data at %s", paths, want)
	}
	if len(f.setUps) != 1 {
		t.Fatalf("mounter SetUps = %v, want one", f.setUps)
	}
	got := f.setUps[0]
	if got.SpecName != "pv-ebs" || got.Driver != "ebs.csi.aws.com" || got.Handle != "vol-0123" || got.FSType != "ext4" || !got.ReadOnly || got.Inline {
		t.Errorf("mounter SetUp = %+v, want the EBS driver's vol-0123 (ext4, read-only) for pv-ebs", got)
	}
}

// TestMigratedInlineVolume: an inline gcePersistentDisk volume is
// served by the PD CSI driver as a persistent (attached) volume named
// after its translation, as upstream's migrated inline spec.
func TestMigratedInlineVolume(t *testing.T) {
	e, f := csiEnv(t, csi.Published{})
	pod := testPod()
	pod.Spec.Volumes = []corev1.Volume{{Name: "disk", VolumeSource: corev1.VolumeSource{GCEPersistentDisk: &corev1.GCEPersistentDiskVolumeSource{
		PDName: "my-disk", FSType: "ext4", ReadOnly: true,
	}}}}
	pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "disk", MountPath: "/disk"}}
	paths, err := e.m.SetUp(context.Background(), pod)
	if err != nil {
		t.Fatal(err)
	}
	want := []csi.Volume{{
		SpecName: "pd.csi.storage.gke.io-my-disk", Driver: "pd.csi.storage.gke.io",
		Handle: "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/my-disk", FSType: "ext4",
		Attributes:  map[string]string{"partition": ""},
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadOnlyMany},
	}}
	if diff := cmp.Diff(want, f.setUps); diff != "" {
		t.Errorf("mounter SetUps (-want +got):\n%s", diff)
	}
	if dir := filepath.Join(e.dir, "uid-1", "volumes", "kubernetes.io~csi", "pd.csi.storage.gke.io-my-disk", "mount"); paths["disk"] != dir {
		t.Errorf("SetUp() paths = %v, want disk at %s", paths, dir)
	}
}

// TestMigratedPluginsAreTranslated: every in-tree plugin berth announces
// as migrated in the CSINode (csi.MigratedPlugins) is one the
// translation library migrates, so that no volume of them is refused.
func TestMigratedPluginsAreTranslated(t *testing.T) {
	for _, name := range csi.MigratedPlugins() {
		if !translator.IsMigratableIntreePluginByName(name) {
			t.Errorf("%s is announced as migrated but csi-translation-lib does not translate it", name)
		}
	}
}
