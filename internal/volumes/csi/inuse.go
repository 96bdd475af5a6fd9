package csi

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
)

// VolumesInUse returns, sorted, the unique names of the attachable volumes
// published or being published on the node: those whose vol_data.json is
// in a pod's directory, or in a block volume's data directory (written before NodeStageVolume and
// NodePublishVolume, removed only after NodeUnpublishVolume and the
// unstage, so a volume is reported from before its mount until after its
// unmount, and again after berth restarts), of persistent lifecycle, whose
// driver's CSIDriver requires attach. It is upstream's
// status.volumesInUse for CSI volumes; the attach/detach controller
// detaches none of them. Never nil when err is nil.
func (m *Mounter) VolumesInUse(ctx context.Context) ([]corev1.UniqueVolumeName, error) {
	type volume struct{ driver, handle string }
	var vols []volume
	err := m.publications(func(_ string, data map[string]string) bool {
		if data[keyLifecycleMode] != string(storagev1.VolumeLifecyclePersistent) {
			return true
		}
		vols = append(vols, volume{data[keyDriverName], data[keyVolumeHandle]})
		return true
	})
	if err != nil {
		return nil, err
	}
	// The block volumes: their vol_data.json is written before the stage
	// and removed after the unstage too.
	err = m.blockData(func(data map[string]string) {
		vols = append(vols, volume{data[keyDriverName], data[keyVolumeHandle]})
	})
	if err != nil {
		return nil, err
	}
	attach := map[string]bool{}
	out := []corev1.UniqueVolumeName{}
	for _, v := range vols {
		required, known := attach[v.driver]
		if !known {
			p, err := m.driverPolicy(ctx, v.driver)
			if err != nil {
				return nil, err
			}
			required = p.AttachRequired
			attach[v.driver] = required
		}
		if required {
			out = append(out, corev1.UniqueVolumeName(uniqueName(v.driver, v.handle)))
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
