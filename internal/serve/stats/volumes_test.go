package stats

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/berthk8s/berth/internal/volumes/volume"
)

// mkfile writes size bytes at path, making its directories.
func mkfile(t *testing.T, path string, size int) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Repeat("x", size)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDuDoesNotFollowSymlinks plants symlinks to / (and to a big file
// outside) in a volume: the walk counts each link as one small inode and
// never enters what it points to.
func TestDuDoesNotFollowSymlinks(t *testing.T) {
	root := t.TempDir()
	vol := filepath.Join(root, "vol")
	mkfile(t, filepath.Join(vol, "a", "data"), 64<<10)
	mkfile(t, filepath.Join(root, "outside"), 8<<20)
	for link, target := range map[string]string{"slash": "/", "a/up": "..", "big": "../outside"} {
		if err := os.Symlink(target, filepath.Join(vol, link)); err != nil {
			t.Fatal(err)
		}
	}
	f, err := openBeneath(vol, ".")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	bytes, inodes, err := duFd(f)
	if err != nil {
		t.Fatalf("du: %v", err)
	}
	// vol, a, a/data, three links.
	if inodes != 6 {
		t.Errorf("inodes = %d, want 6 (the symlinks were followed?)", inodes)
	}
	if bytes < 64<<10 || bytes > 1<<20 {
		t.Errorf("bytes = %d, want about 64 KiB (not / nor the 8 MiB file outside)", bytes)
	}
}

// TestOpenBeneathRefusesSymlinks shows a volume path whose element is a
// symlink (a pod replaced its volume directory) is not opened.
func TestOpenBeneathRefusesSymlinks(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "uid", "volumes"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/", filepath.Join(root, "uid", "volumes", "evil")); err != nil {
		t.Fatal(err)
	}
	if f, err := openBeneath(root, "uid/volumes/evil"); err == nil {
		f.Close()
		t.Fatal("opened a symlink to /")
	}
	if f, err := openBeneath(root, "uid/../../etc"); err == nil {
		f.Close()
		t.Fatal("opened a path above the root")
	}
}

// TestVolumeCache measures a pod's volumes below the pods directory:
// each kind's directory, the emptyDir counted as ephemeral.
func TestVolumeCache(t *testing.T) {
	pods := t.TempDir()
	vols := filepath.Join(pods, "uid1", "volumes")
	mkfile(t, filepath.Join(vols, volume.KindEmptyDir.PluginDir(), "cache", "blob"), 128<<10)
	mkfile(t, filepath.Join(vols, volume.KindSecret.PluginDir(), "creds", "token"), 10)
	if err := os.Symlink("/", filepath.Join(vols, volume.KindConfigMap.PluginDir())); err != nil {
		t.Fatal(err)
	}
	c := &volumeCache{podsDir: pods, clock: testingclock.NewFakeClock(epoch), period: DefaultVolumeStatsAggPeriod}
	if got := c.Volumes("uid1"); got != nil {
		t.Fatalf("before the first pass: %v", got)
	}
	c.step(context.Background())
	got := c.Volumes("uid1")
	type row struct {
		Name      string
		Ephemeral bool
		Inodes    uint64
	}
	var rows []row
	for _, v := range got {
		rows = append(rows, row{v.Stats.Name, v.Ephemeral, *v.Stats.InodesUsed})
		if v.Stats.CapacityBytes == nil || *v.Stats.CapacityBytes == 0 || !v.Stats.Time.Time.Equal(epoch) {
			t.Errorf("volume %s: no capacity or time: %+v", v.Stats.Name, v.Stats.FsStats)
		}
	}
	want := []row{{"cache", true, 2}, {"creds", false, 2}}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("volumes (-want +got):\n%s", diff)
	}
	if got[0].Stats.UsedBytes == nil || *got[0].Stats.UsedBytes < 128<<10 {
		t.Errorf("cache used = %v, want at least 128 KiB", got[0].Stats.UsedBytes)
	}
}

func TestEphemeralVolume(t *testing.T) {
	for _, tt := range []struct {
		kind  volume.Kind
		tmpfs bool
		want  bool
	}{
		{volume.KindEmptyDir, false, true},
		{volume.KindEmptyDir, true, false},
		{volume.KindConfigMap, true, true},
		{volume.KindSecret, true, false},
		{volume.KindDownwardAPI, true, false},
		{volume.KindProjected, true, false},
	} {
		if got := ephemeralVolume(tt.kind, tt.tmpfs); got != tt.want {
			t.Errorf("ephemeralVolume(%s, tmpfs %v) = %v, want %v", tt.kind.PluginDir(), tt.tmpfs, got, tt.want)
		}
	}
}
