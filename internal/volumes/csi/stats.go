package csi

import (
	"context"
	"errors"
	"fmt"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

// ErrStatsNotSupported is VolumeStats' answer for a driver without the
// GET_VOLUME_STATS node capability (upstream's NotSupportedError, which
// its volume stats calculator skips without a word).
var ErrStatsNotSupported = errors.New("the CSI driver does not report volume stats")

// VolumeUsage is what a driver's NodeGetVolumeStats says of a volume:
// bytes and inodes, each 0 when the driver gives no figure of that unit,
// as upstream's csiDriverClient.NodeGetVolumeStats reads the answer.
type VolumeUsage struct {
	Capacity, Available, Used      int64
	Inodes, InodesFree, InodesUsed int64
}

// VolumeStats asks v's driver for the usage of v as published for pod
// podUID, as upstream's metricsCsi.GetMetrics: the driver must be
// registered and advertise GET_VOLUME_STATS (else ErrStatsNotSupported);
// NodeGetVolumeStats gets the volume's handle and its target (TargetDir)
// as the volume path, and no staging path, as upstream's; a block volume
// (v.Block) its pod's entry at the global map path
// (<plugins>/kubernetes.io/csi/volumeDevices/<pv>/dev/<pod uid>, as
// upstream's csiBlockMapper MetricsProvider; a driver without
// GET_VOLUME_STATS gives a block volume no stats, as upstream's, which
// measures no CSI device itself). An answer without usage is an error.
// Each call is bounded by Timeout and by ctx.
func (m *Mounter) VolumeStats(ctx context.Context, podUID types.UID, v Volume) (VolumeUsage, error) {
	check, path := checkNames, TargetDir(m.cfg.PodsDir, podUID, v.SpecName)
	if v.Block {
		check, path = checkBlockNames, newBlockPaths(m.cfg.PluginsDir, m.cfg.PodsDir, podUID, v.SpecName).podMap
	}
	if err := check(podUID, v.SpecName, v.Driver); err != nil {
		return VolumeUsage{}, fmt.Errorf("get stats of CSI volume %q: %w", v.SpecName, err)
	}
	handle := v.handle(podUID)
	if handle == "" {
		return VolumeUsage{}, fmt.Errorf("get stats of CSI volume %q: the volume handle is empty", v.SpecName)
	}
	if _, ok := m.cfg.Drivers.Driver(v.Driver); !ok {
		return VolumeUsage{}, fmt.Errorf(msgNoDriver, v.Driver)
	}
	client, err := m.cfg.Drivers.Dial(v.Driver)
	if err != nil {
		return VolumeUsage{}, err
	}
	defer client.Close()
	caps, err := client.NodeGetCapabilities(ctx)
	if err != nil {
		return VolumeUsage{}, fmt.Errorf("get node capabilities of CSI driver %q: %w", v.Driver, err)
	}
	if !caps.GetVolumeStats {
		return VolumeUsage{}, ErrStatsNotSupported
	}
	resp, err := client.NodeGetVolumeStats(ctx, &csipb.NodeGetVolumeStatsRequest{
		VolumeId: handle, VolumePath: path,
	})
	if err != nil {
		return VolumeUsage{}, fmt.Errorf("get stats of CSI volume %q: %w", v.SpecName, err)
	}
	return usageOf(ctx, resp)
}

// usageOf reads a NodeGetVolumeStats answer as upstream does: each
// usage's unit fills its three figures, an unknown unit is logged.
func usageOf(ctx context.Context, resp *csipb.NodeGetVolumeStatsResponse) (VolumeUsage, error) {
	usages := resp.GetUsage()
	if usages == nil {
		return VolumeUsage{}, errors.New(msgNoUsage)
	}
	var u VolumeUsage
	for _, x := range usages {
		if x == nil {
			continue
		}
		switch x.GetUnit() {
		case csipb.VolumeUsage_BYTES:
			u.Available, u.Capacity, u.Used = x.GetAvailable(), x.GetTotal(), x.GetUsed()
		case csipb.VolumeUsage_INODES:
			u.InodesFree, u.Inodes, u.InodesUsed = x.GetAvailable(), x.GetTotal(), x.GetUsed()
		default:
			klog.FromContext(ctx).Error(nil, "unknown unit in VolumeUsage", "unit", x.GetUnit().String())
		}
	}
	return u, nil
}

// msgNoUsage is upstream's error for an answer without usage;
// upstream_test.go pins it.
const msgNoUsage = "failed to get usage from response. usage is nil"
