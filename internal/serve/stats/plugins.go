package stats

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/berthk8s/berth/internal/volumes/csi"
	"github.com/berthk8s/berth/internal/volumes/volume"
)

// VolumeLister lists the pods' volumes whose usage their plugin reports
// (the volume manager's StatVolumes).
type VolumeLister interface {
	StatVolumes() []volume.PodStatVolumes
}

// CSIStats asks a CSI volume's driver for its usage (csi.Mounter's
// VolumeStats).
type CSIStats interface {
	VolumeStats(ctx context.Context, podUID types.UID, v csi.Volume) (csi.VolumeUsage, error)
}

// pluginVolumes measures the volumes the volume manager lists: a local
// persistent volume by statfs of its mount point, as upstream's local
// plugin, or of volumeMode Block by the size of its device; a CSI volume
// (of either mode) by its driver's NodeGetVolumeStats, as upstream's CSI
// plugin. Volumes of claims carry their pvcRef.
type pluginVolumes struct {
	podsDir string
	lister  VolumeLister
	// csi is nil when berth runs without CSI.
	csi CSIStats
	// callTimeout bounds each driver call.
	callTimeout time.Duration
}

// csiCallTimeout is the bound of a driver's NodeGetVolumeStats within a
// pass of period: upstream's csiTimeout, or half the period when that is
// shorter. Upstream measures each pod in its own goroutine, so that a
// hung driver delays only its pods; berth measures every pod in one pass,
// which a driver must not hold up past the next.
func csiCallTimeout(period time.Duration) time.Duration {
	return min(csi.Timeout, period/2)
}

// measure returns the listed volumes' stats by pod UID. A driver whose
// call timed out is not asked again in this pass: its other volumes go
// without stats until the next, as a failed measurement does upstream.
func (p *pluginVolumes) measure(ctx context.Context, now func() time.Time) map[string][]volumeStat {
	if p.lister == nil {
		return nil
	}
	out := map[string][]volumeStat{}
	hung := map[string]bool{}
	for _, pod := range p.lister.StatVolumes() {
		for _, v := range pod.Volumes {
			var fs *statsapi.FsStats
			var err error
			switch {
			case v.LocalDir != "":
				fs, err = p.local(v.LocalDir, now())
			case v.LocalDevice != "":
				fs, err = deviceStats(v.LocalDevice, now())
			case v.CSI != nil && p.csi != nil && !hung[v.CSI.Driver]:
				fs, err = p.csiVolume(ctx, pod.UID, *v.CSI, now(), hung)
			default:
				continue
			}
			if err != nil {
				if !errors.Is(err, csi.ErrStatsNotSupported) {
					klog.FromContext(ctx).V(4).Info("Failed to calculate volume metrics", "podUID", pod.UID, "volumeName", v.Name, "err", err)
				}
				continue
			}
			vs := volumeStat{Stats: statsapi.VolumeStats{Name: v.Name, FsStats: *fs}}
			if v.Claim != "" {
				vs.Stats.PVCRef = &statsapi.PVCReference{Name: v.Claim, Namespace: pod.Namespace}
			}
			out[string(pod.UID)] = append(out[string(pod.UID)], vs)
		}
	}
	return out
}

// local is the filesystem of a local persistent volume's mount point
// (rel below the pods directory, opened without following symlinks).
func (p *pluginVolumes) local(rel string, now time.Time) (*statsapi.FsStats, error) {
	dir, err := openBeneath(p.podsDir, rel)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	var st unix.Statfs_t
	if err := unix.Fstatfs(int(dir.Fd()), &st); err != nil {
		return nil, err
	}
	return statfsStats(&st, now), nil
}

// deviceStats is the size of a block device as its capacity, every other
// figure 0, as upstream's metricsBlock (the device opened and sought to
// its end) read by parsePodVolumeStats. The device is the path of a
// local PersistentVolume, which the cluster's administrator names, not
// a pod.
func deviceStats(device string, now time.Time) (*statsapi.FsStats, error) {
	f, err := os.Open(device)
	if err != nil {
		return nil, fmt.Errorf("open device %q: %w", device, err)
	}
	defer f.Close()
	end, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, fmt.Errorf("detect the size of %q: %w", device, err)
	}
	return usageStats(csi.VolumeUsage{Capacity: end}, now), nil
}

// csiVolume asks v's driver, within callTimeout; a call that runs out
// of time marks the driver hung.
func (p *pluginVolumes) csiVolume(ctx context.Context, uid types.UID, v csi.Volume, now time.Time, hung map[string]bool) (*statsapi.FsStats, error) {
	callCtx, cancel := context.WithTimeout(ctx, p.callTimeout)
	defer cancel()
	u, err := p.csi.VolumeStats(callCtx, uid, v)
	if err != nil {
		if callCtx.Err() != nil {
			hung[v.Driver] = true
		}
		return nil, err
	}
	return usageStats(u, now), nil
}

// usageStats is a driver's usage as upstream's parsePodVolumeStats
// gives it: every figure set (0 when the driver gave none; a negative
// figure, which the CSI spec does not allow, as 0).
func usageStats(u csi.VolumeUsage, now time.Time) *statsapi.FsStats {
	c := func(v int64) *uint64 { return ptr(uint64(max(v, 0))) }
	return &statsapi.FsStats{
		Time: metav1.NewTime(now), CapacityBytes: c(u.Capacity), AvailableBytes: c(u.Available), UsedBytes: c(u.Used),
		Inodes: c(u.Inodes), InodesFree: c(u.InodesFree), InodesUsed: c(u.InodesUsed),
	}
}
