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
	// walks are the usage walks of volumes by path below podsDir, owned
	// by the goroutine that runs step; those of volumes gone are closed
	// at the end of each pass.
	walks map[string]*volumeWalk
	// walkLimit is the most inodes a volume's walk counts a pass
	// (maxWalkInodes when 0).
	walkLimit uint64
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
	if c.walks == nil {
		c.walks = map[string]*volumeWalk{}
	}
	defer c.forgetWalks()
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
// symlinks and reads its filesystem (statfs) and its usage. A volume that
// is its own filesystem (a tmpfs) uses what statfs says of it; another's
// usage is its walk (volumeWalk), which may take several passes.
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
	fs := statfsStats(&st, c.clock.Now())
	own, err := ownFilesystem(c.podsDir, rel, dir)
	if err != nil {
		return volumeStat{}, err
	}
	if !own {
		u, err := c.walk(rel, dir)
		if err != nil {
			return volumeStat{}, err
		}
		fs.UsedBytes, fs.InodesUsed = ptr(u.Bytes), ptr(u.Inodes)
	}
	return volumeStat{
		Stats:     statsapi.VolumeStats{Name: name, FsStats: *fs},
		Ephemeral: ephemeralVolume(kind, st.Type == unix.TMPFS_MAGIC),
	}, nil
}

// ownFilesystem reports whether the open directory dir (rel below root)
// is the root of its filesystem: its parent's is another.
func ownFilesystem(root, rel string, dir *os.File) (bool, error) {
	parent, err := openBeneath(root, path.Dir(rel))
	if err != nil {
		return false, err
	}
	defer parent.Close()
	var ps, ds unix.Stat_t
	if err := unix.Fstat(int(parent.Fd()), &ps); err != nil {
		return false, err
	}
	if err := unix.Fstat(int(dir.Fd()), &ds); err != nil {
		return false, err
	}
	return ps.Dev != ds.Dev, nil
}

// volumeWalk is the usage walk of one volume, across passes.
type volumeWalk struct {
	// w is the walk in progress (nil between walks).
	w *duWalk
	// last is the count of the last walk that saw the whole tree (zero
	// before the first).
	last usage
	// seen marks the walks of volumes measured in this pass.
	seen bool
}

// walk runs the volume's walk for one pass (at most walkLimit inodes) and
// returns its usage: a walk's total once it is complete; until then what
// it counted so far, or the last complete total when that is more: at
// least the usage, as far as berth knows, never a partial count taken
// for the total. A walk that ends early (its tree moved under it) counts
// the same way, and the next pass starts a new one.
func (c *volumeCache) walk(rel string, dir *os.File) (usage, error) {
	vw := c.walks[rel]
	if vw == nil {
		vw = &volumeWalk{}
		c.walks[rel] = vw
	}
	vw.seen = true
	if vw.w == nil {
		w, err := newWalk(dir)
		if err != nil {
			return usage{}, err
		}
		vw.w = w
	}
	w := vw.w
	limit := c.walkLimit
	if limit == 0 {
		limit = maxWalkInodes
	}
	over := w.run(limit)
	got := usage{Bytes: w.bytes, Inodes: w.inodes}
	if over {
		w.Close()
		vw.w = nil
		if w.err == nil {
			vw.last = got
			return got, nil
		}
	}
	return usage{Bytes: max(got.Bytes, vw.last.Bytes), Inodes: max(got.Inodes, vw.last.Inodes)}, nil
}

// forgetWalks closes the walks of volumes not measured in this pass and
// clears the marks for the next.
func (c *volumeCache) forgetWalks() {
	for rel, vw := range c.walks {
		if !vw.seen {
			if vw.w != nil {
				vw.w.Close()
			}
			delete(c.walks, rel)
			continue
		}
		vw.seen = false
	}
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
