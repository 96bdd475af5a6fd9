package volume

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	csitranslation "k8s.io/csi-translation-lib"
	"k8s.io/klog/v2"

	"github.com/berthk8s/berth/internal/volumes/csi"
)

// translator is upstream's in-tree to CSI translation: the same tables the
// attach/detach controller, the scheduler and the external attacher use,
// so that the driver, volume handle and attributes berth stages and
// publishes with (and the VolumeAttachment it waits for) are theirs.
var translator = csitranslation.New()

// msgTranslate is upstream's (csimigration.TranslateInTreeSpecToCSI).
const msgTranslate = "failed to translate in-tree pv to CSI: %v"

// migratedPlugin names the in-tree plugin of pv or vol (one of them nil)
// when berth leaves its volumes to the plugin's CSI driver
// (csi.MigratedPlugins, all that upstream's kubelet migrates); "" for a
// source that is not migrated.
func migratedPlugin(pv *corev1.PersistentVolume, vol *corev1.Volume) string {
	if (pv != nil && !translator.IsPVMigratable(pv)) || (vol != nil && !translator.IsInlineMigratable(vol)) {
		return ""
	}
	name, err := translator.GetInTreePluginNameFromSpec(pv, vol)
	if err != nil || !slices.Contains(csi.MigratedPlugins(), name) {
		return ""
	}
	return name
}

// migratePV returns the CSI form of a persistent volume whose in-tree
// source is migrated, or pv itself.
func migratePV(ctx context.Context, pv *corev1.PersistentVolume) (*corev1.PersistentVolume, error) {
	if migratedPlugin(pv, nil) == "" {
		return pv, nil
	}
	out, err := translator.TranslateInTreePVToCSI(klog.FromContext(ctx), pv)
	if err != nil {
		return nil, fmt.Errorf(msgTranslate, err)
	}
	return out, nil
}

// migratedInlineCSI is the csi.Volume of a pod's inline in-tree volume
// that is migrated (KindMigrated): the translated persistent volume's
// source, named after it as upstream's spec is (its directory is
// kubernetes.io~csi/<translated name>), never read-only at publish, as
// upstream's migrated inline spec is not.
func migratedInlineCSI(ctx context.Context, pod *corev1.Pod, v corev1.Volume) (csi.Volume, error) {
	pv, err := translator.TranslateInTreeInlineVolumeToCSI(klog.FromContext(ctx), &v, pod.Namespace)
	if err != nil {
		return csi.Volume{}, fmt.Errorf(msgTranslate, err)
	}
	src := pv.Spec.CSI
	return csi.Volume{
		SpecName: pv.Name, Driver: src.Driver, Handle: src.VolumeHandle,
		FSType: src.FSType, MountOptions: pv.Spec.MountOptions, Attributes: src.VolumeAttributes,
		AccessModes: pv.Spec.AccessModes, StageSecret: src.NodeStageSecretRef, PublishSecret: src.NodePublishSecretRef,
	}, nil
}
