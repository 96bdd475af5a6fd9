package stats

import (
	"context"
	"os"
	"path"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/volumes/volume"
)

// DefaultVolumeStatsAggPeriod is upstream's volumeStatsAggPeriod default.
const DefaultVolumeStatsAggPeriod = time.Minute

// volumeStat is one pod volume's usage and whether it counts towards the
// pod's ephemeral storage.
type volumeStat struct {
	Stats     statsapi.VolumeStats
	Ephemeral bool
}

// measuredPlugins are the volume plugins whose directories berth
// measures, as upstream's volume stats calculator does for the volumes
// with a metrics provider (hostPath has none and no directory).
var measuredPlugins = []volume.Kind{volume.KindEmptyDir, volume.KindConfigMap, volume.KindSecret,
	volume.KindDownwardAPI, volume.KindProjected}

// volumeCache measures every pod's volumes every period: the cost of a
// du is paid once per period, not per request. Run is the owner
// goroutine; it publishes each pass as an immutable map by pod UID.
type volumeCache struct {
	podsDir string
	clock   clock.WithTicker
	period  time.Duration
	// plugins measures the claim and CSI volumes (nil: none).
	plugins *pluginVolumes
	// byPod is the latest pass (never modified).
	byPod atomic.Pointer[map[string][]volumeStat]
}

// Run measures at once and then every period until ctx ends.
func (c *volumeCache) Run(ctx context.Context) error {
	t := c.clock.NewTicker(c.period)
	defer t.Stop()
	for {
		c.step(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		}
	}
}

// step measures every pod's volumes once and publishes them.
func (c *volumeCache) step(ctx context.Context) {
	uids, err := os.ReadDir(c.podsDir)
	if err != nil && !os.IsNotExist(err) {
		klog.FromContext(ctx).V(2).Info("Cannot list pod directories", "dir", c.podsDir, "err", err)
	}
	out := make(map[string][]volumeStat, len(uids))
	for _, d := range uids {
		if d.IsDir() && validName(d.Name()) {
			if vs := c.pod(ctx, d.Name()); len(vs) > 0 {
				out[d.Name()] = vs
			}
		}
	}
	if c.plugins != nil {
		for uid, vs := range c.plugins.measure(ctx, c.clock.Now) {
			out[uid] = append(out[uid], vs...)
			slices.SortFunc(out[uid], byName)
		}
	}
	c.byPod.Store(&out)
}

// Volumes returns the latest measurement of the pod's volumes (nil
// before the first pass). The slice must not be modified.
func (c *volumeCache) Volumes(uid string) []volumeStat {
	if m := c.byPod.Load(); m != nil {
		return (*m)[uid]
	}
	return nil
}

// pod measures one pod's volumes, in name order.
func (c *volumeCache) pod(ctx context.Context, uid string) []volumeStat {
	var out []volumeStat
	for _, kind := range measuredPlugins {
		rel := path.Join(uid, "volumes", kind.PluginDir())
		dir, err := openBeneath(c.podsDir, rel)
		if err != nil {
			continue // the pod has no volume of this kind
		}
		names, _ := dir.Readdirnames(-1)
		_ = dir.Close()
		for _, name := range names {
			if !validName(name) {
				continue
			}
			vs, err := c.measure(path.Join(rel, name), kind, name)
			if err != nil {
				klog.FromContext(ctx).V(2).Info("Cannot measure volume", "podUID", uid, "volume", name, "err", err)
				continue
			}
			out = append(out, vs)
		}
	}
	slices.SortFunc(out, byName)
	return out
}

func byName(a, b volumeStat) int { return strings.Compare(a.Stats.Name, b.Stats.Name) }

// measure opens the volume below the pods directory without following
// symlinks and reads its filesystem (statfs) and its usage (a bounded
// du); a usage cut short by the bound is reported as counted.
func (c *volumeCache) measure(rel string, kind volume.Kind, name string) (volumeStat, error) {
	dir, err := openBeneath(c.podsDir, rel)
	if err != nil {
		return volumeStat{}, err
	}
	defer dir.Close()
	var st unix.Statfs_t
	if err := unix.Fstatfs(int(dir.Fd()), &st); err != nil {
		return volumeStat{}, err
	}
	used, inodesUsed, err := duFd(dir)
	if err != nil && err != errWalkBound {
		return volumeStat{}, err
	}
	fs := statfsStats(&st, c.clock.Now())
	fs.UsedBytes, fs.InodesUsed = ptr(used), ptr(inodesUsed)
	return volumeStat{
		Stats:     statsapi.VolumeStats{Name: name, FsStats: *fs},
		Ephemeral: ephemeralVolume(kind, st.Type == unix.TMPFS_MAGIC),
	}, nil
}

// ephemeralVolume says whether a volume counts towards the pod's
// ephemeral storage, as upstream's IsLocalEphemeralVolume: an emptyDir on
// the node's disk (not medium Memory, which is tmpfs) and a configMap.
func ephemeralVolume(kind volume.Kind, tmpfs bool) bool {
	return (kind == volume.KindEmptyDir && !tmpfs) || kind == volume.KindConfigMap
}

// validName reports whether a directory entry may be a path element: not
// empty, not . or .., no slash.
func validName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.Contains(name, "/")
}

// statfsStats converts a statfs answer.
func statfsStats(st *unix.Statfs_t, now time.Time) *statsapi.FsStats {
	bsize := uint64(st.Bsize)
	capacity, avail, used := st.Blocks*bsize, st.Bavail*bsize, (st.Blocks-st.Bfree)*bsize
	inodes, free := st.Files, st.Ffree
	usedInodes := inodes - free
	return &statsapi.FsStats{
		Time: metav1.NewTime(now), CapacityBytes: &capacity, AvailableBytes: &avail, UsedBytes: &used,
		Inodes: &inodes, InodesFree: &free, InodesUsed: &usedInodes,
	}
}
