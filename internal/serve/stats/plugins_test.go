package stats

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/berthk8s/berth/internal/volumes/csi"
	"github.com/berthk8s/berth/internal/volumes/volume"
)

type fakeLister []volume.PodStatVolumes

func (l fakeLister) StatVolumes() []volume.PodStatVolumes { return l }

// fakeCSI answers VolumeStats by driver: a usage, an error, or (hang) a
// wait for the call's context.
type fakeCSI struct {
	mu    sync.Mutex // guards calls
	calls []string   // driver/volume of each call
	usage map[string]csi.VolumeUsage
	err   map[string]error
	hang  map[string]bool
}

func (f *fakeCSI) VolumeStats(ctx context.Context, _ types.UID, v csi.Volume) (csi.VolumeUsage, error) {
	f.mu.Lock()
	f.calls = append(f.calls, v.Driver+"/"+v.SpecName)
	f.mu.Unlock()
	if f.hang[v.Driver] {
		<-ctx.Done()
		return csi.VolumeUsage{}, ctx.Err()
	}
	return f.usage[v.Driver], f.err[v.Driver]
}

// TestPluginVolumes: a local volume is its mount point's filesystem, a
// CSI volume its driver's answer, each with its claim's pvcRef (none for
// an inline volume); a driver without volume stats, and a volume whose
// mount point is a symlink, give no entry; the cache publishes them
// beside the measured directories, in name order, not as ephemeral
// storage.
func TestPluginVolumes(t *testing.T) {
	pods := t.TempDir()
	local := filepath.Join("uid1", "volumes", "kubernetes.io~local-volume", "pv-local")
	mkfile(t, filepath.Join(pods, local, "data"), 10)
	mkfile(t, filepath.Join(pods, "uid1", "volumes", volume.KindEmptyDir.PluginDir(), "cache", "blob"), 10)
	if err := os.Symlink("/", filepath.Join(pods, "uid1", "volumes", "kubernetes.io~local-volume", "evil")); err != nil {
		t.Fatal(err)
	}
	fake := &fakeCSI{
		usage: map[string]csi.VolumeUsage{"a.csi": {Capacity: 1000, Available: 600, Used: 400, Inodes: 50, InodesFree: 40, InodesUsed: 10}},
		err:   map[string]error{"none.csi": csi.ErrStatsNotSupported},
	}
	lister := fakeLister{{UID: "uid1", Namespace: "ns", Volumes: []volume.StatVolume{
		{Name: "local", Claim: "local-claim", LocalDir: local},
		{Name: "evil", Claim: "evil-claim", LocalDir: filepath.Join("uid1", "volumes", "kubernetes.io~local-volume", "evil")},
		{Name: "data", Claim: "data-claim", CSI: &csi.Volume{SpecName: "pv-a", Driver: "a.csi", Handle: "h"}},
		{Name: "inline", CSI: &csi.Volume{SpecName: "inline", Driver: "a.csi", Inline: true}},
		{Name: "quiet", Claim: "quiet-claim", CSI: &csi.Volume{SpecName: "pv-n", Driver: "none.csi", Handle: "n"}},
	}}}
	c := &volumeCache{podsDir: pods, clock: testingclock.NewFakeClock(epoch), period: time.Minute,
		plugins: &pluginVolumes{podsDir: pods, lister: lister, csi: fake, callTimeout: time.Minute}}
	c.step(context.Background())
	got := c.Volumes("uid1")
	type row struct {
		Name      string
		PVC       *statsapi.PVCReference
		Ephemeral bool
	}
	var rows []row
	for _, v := range got {
		rows = append(rows, row{v.Stats.Name, v.Stats.PVCRef, v.Ephemeral})
	}
	want := []row{
		{"cache", nil, true},
		{"data", &statsapi.PVCReference{Name: "data-claim", Namespace: "ns"}, false},
		{"inline", nil, false},
		{"local", &statsapi.PVCReference{Name: "local-claim", Namespace: "ns"}, false},
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Fatalf("volumes (-want +got):\n%s", diff)
	}
	data := got[1].Stats.FsStats
	wantData := statsapi.FsStats{Time: data.Time, CapacityBytes: ptr(1000), AvailableBytes: ptr(600), UsedBytes: ptr(400),
		Inodes: ptr(50), InodesFree: ptr(40), InodesUsed: ptr(10)}
	if diff := cmp.Diff(wantData, data); diff != "" || !data.Time.Time.Equal(epoch) {
		t.Errorf("CSI volume stats (-want +got):\n%s", diff)
	}
	if l := got[3].Stats; l.CapacityBytes == nil || *l.CapacityBytes == 0 || l.Inodes == nil || *l.Inodes == 0 {
		t.Errorf("local volume without the filesystem's figures: %+v", l.FsStats)
	}
}

// TestPluginVolumesHungDriver: a driver that does not answer costs one
// call timeout per pass; its other volumes are not asked in that pass,
// those of other drivers are.
func TestPluginVolumesHungDriver(t *testing.T) {
	fake := &fakeCSI{hang: map[string]bool{"hung.csi": true}, usage: map[string]csi.VolumeUsage{"ok.csi": {Capacity: 1}}}
	lister := fakeLister{
		{UID: "uid1", Namespace: "ns", Volumes: []volume.StatVolume{
			{Name: "a", Claim: "a", CSI: &csi.Volume{SpecName: "pv-a", Driver: "hung.csi", Handle: "a"}},
			{Name: "b", Claim: "b", CSI: &csi.Volume{SpecName: "pv-b", Driver: "hung.csi", Handle: "b"}},
		}},
		{UID: "uid2", Namespace: "ns", Volumes: []volume.StatVolume{
			{Name: "c", Claim: "c", CSI: &csi.Volume{SpecName: "pv-c", Driver: "hung.csi", Handle: "c"}},
			{Name: "d", Claim: "d", CSI: &csi.Volume{SpecName: "pv-d", Driver: "ok.csi", Handle: "d"}},
		}},
	}
	p := &pluginVolumes{lister: lister, csi: fake, callTimeout: 50 * time.Millisecond}
	got := p.measure(context.Background(), func() time.Time { return epoch })
	if diff := cmp.Diff([]string{"hung.csi/pv-a", "ok.csi/pv-d"}, fake.calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if len(got["uid1"]) != 0 || len(got["uid2"]) != 1 || got["uid2"][0].Stats.Name != "d" {
		t.Errorf("measured %+v, want only d", got)
	}
}

// TestPluginVolumesLocalDevice: a local volume of volumeMode Block is
// its device's size as capacity and 0 for every other figure, with its
// claim's pvcRef, as upstream's metricsBlock through parsePodVolumeStats
// (a file stands in for the device: the size is where a seek to the end
// lands); a device that is gone gives no entry.
func TestPluginVolumesLocalDevice(t *testing.T) {
	dev := filepath.Join(t.TempDir(), "disk")
	if err := os.WriteFile(dev, make([]byte, 3<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	lister := fakeLister{{UID: "uid1", Namespace: "ns", Volumes: []volume.StatVolume{
		{Name: "raw", Claim: "raw-claim", LocalDevice: dev},
		{Name: "gone", Claim: "gone-claim", LocalDevice: dev + "-gone"},
	}}}
	p := &pluginVolumes{lister: lister, callTimeout: time.Minute}
	got := p.measure(context.Background(), func() time.Time { return epoch })
	want := []volumeStat{{Stats: statsapi.VolumeStats{
		Name: "raw", PVCRef: &statsapi.PVCReference{Name: "raw-claim", Namespace: "ns"},
		FsStats: statsapi.FsStats{Time: metav1.NewTime(epoch), CapacityBytes: ptr(3 << 20), AvailableBytes: ptr(0), UsedBytes: ptr(0),
			Inodes: ptr(0), InodesFree: ptr(0), InodesUsed: ptr(0)},
	}}}
	if diff := cmp.Diff(want, got["uid1"]); diff != "" {
		t.Errorf("measured (-want +got):\n%s", diff)
	}
}

func TestCSICallTimeout(t *testing.T) {
	if got := csiCallTimeout(time.Minute); got != 30*time.Second {
		t.Errorf("timeout of a 1m period: %v", got)
	}
	if got := csiCallTimeout(time.Hour); got != csi.Timeout {
		t.Errorf("timeout of a 1h period: %v, want csi.Timeout", got)
	}
}
