package volume

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/volumes/csi"
)

// fakeCSI records what the volume manager asks of the CSI mounter; a
// publication creates the target directory, as a driver does.
type fakeCSI struct {
	mu          sync.Mutex // guards the fields below
	setUps      []csi.Volume
	republishes []csi.Volume
	tearDowns   []string
	published   csi.Published
	setUpErr    error
	downErr     error
	podsDir     string
	// maps and unmaps are the MapBlock and UnmapPodBlocks calls; mapErr
	// fails MapBlock.
	maps   []csi.Volume
	unmaps []types.UID
	mapErr error
}

// MapBlock records the map and links the device (a file of the test's)
// where csi.Mounter would.
func (f *fakeCSI) MapBlock(_ context.Context, pod *corev1.Pod, v csi.Volume) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.maps = append(f.maps, v)
	if f.mapErr != nil {
		return "", f.mapErr
	}
	link := csi.DeviceLink(f.podsDir, pod.UID, v.SpecName)
	if err := os.MkdirAll(filepath.Dir(link), 0o750); err != nil {
		return "", err
	}
	if err := os.Remove(link); err != nil && !errors.Is(err, fs.ErrNotExist) { // mapped again, as csi.Mounter's makeLink
		return "", err
	}
	return link, os.Symlink("/dev/fake-"+v.SpecName, link)
}

func (f *fakeCSI) UnmapPodBlocks(_ context.Context, uid types.UID) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.unmaps = append(f.unmaps, uid)
	if f.downErr != nil {
		return f.downErr
	}
	links, err := filepath.Glob(filepath.Join(f.podsDir, string(uid), "volumeDevices", "kubernetes.io~csi", "*"))
	for _, l := range links {
		err = errors.Join(err, os.Remove(l))
	}
	return err
}

func (f *fakeCSI) SetUp(_ context.Context, pod *corev1.Pod, v csi.Volume) (csi.Published, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.setUps = append(f.setUps, v)
	if f.setUpErr != nil {
		return csi.Published{}, f.setUpErr
	}
	if err := os.MkdirAll(csi.TargetDir(f.podsDir, pod.UID, v.SpecName), 0o750); err != nil {
		return csi.Published{}, err
	}
	return f.published, nil
}

// Republish records the republication of a volume its driver wants
// republished (every one, here).
func (f *fakeCSI) Republish(_ context.Context, _ *corev1.Pod, v csi.Volume) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.republishes = append(f.republishes, v)
	return true, nil
}

func (f *fakeCSI) TearDown(_ context.Context, target string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tearDowns = append(f.tearDowns, target)
	if f.downErr != nil {
		return f.downErr
	}
	return os.RemoveAll(target)
}

func (f *fakeCSI) calls() (int, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.setUps), len(f.tearDowns)
}

// csiEnv is newEnv with a fake CSI mounter and a boot ID.
func csiEnv(t *testing.T, pub csi.Published) (env, *fakeCSI) {
	e := newEnv(t)
	f := &fakeCSI{published: pub, podsDir: e.dir}
	e.m.cfg.CSI, e.m.cfg.BootID = f, "boot-1"
	return e, f
}

func inlineCSIPod(readOnly bool) *corev1.Pod {
	pod := testPod()
	pod.Spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{
		Driver: "mock.csi", ReadOnly: ptr.To(readOnly), FSType: ptr.To("ext4"),
		VolumeAttributes:     map[string]string{"size": "1Mi"},
		NodePublishSecretRef: &corev1.LocalObjectReference{Name: "creds"},
	}}}}
	pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}}
	return pod
}

// TestInlineCSIVolume: an inline CSI volume is handed to the mounter as
// upstream's spec has it (the pod's namespace for its secret), lives at
// volumes/kubernetes.io~csi/<volume>/mount, is published once per boot
// (not again on the next sync, nor after berth restarts, but after a
// reboot), and is read-only in containers when it asks.
func TestInlineCSIVolume(t *testing.T) {
	e, f := csiEnv(t, csi.Published{})
	pod := inlineCSIPod(true)
	ctx := context.Background()
	for range 2 {
		paths, err := e.m.SetUp(ctx, pod)
		if err != nil {
			t.Fatal(err)
		}
		if want := filepath.Join(e.dir, "uid-1", "volumes", "kubernetes.io~csi", "scratch", "mount"); paths["scratch"] != want {
			t.Errorf("SetUp() paths = %v, want scratch at %s", paths, want)
		}
	}
	want := []csi.Volume{{
		SpecName: "scratch", Driver: "mock.csi", Inline: true, ReadOnly: true, FSType: "ext4",
		Attributes: map[string]string{"size": "1Mi"}, PublishSecret: &corev1.SecretReference{Namespace: "ns", Name: "creds"},
	}}
	if diff := cmp.Diff(want, f.setUps); diff != "" {
		t.Errorf("mounter SetUps (-want +got):\n%s", diff)
	}
	if !ForcedReadOnly(pod.Spec.Volumes[0]) || ForcedReadOnly(inlineCSIPod(false).Spec.Volumes[0]) {
		t.Error("ForcedReadOnly does not follow the inline CSI volume's readOnly")
	}

	restarted, err := New(Config{PodsDir: e.dir, Clock: e.clock, Mounter: e.mounter, CSI: f, BootID: "boot-1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := restarted.SetUp(ctx, pod); err != nil {
		t.Fatal(err)
	}
	if n, _ := f.calls(); n != 1 {
		t.Errorf("%d publications after berth restarted, want still 1", n)
	}
	rebooted, err := New(Config{PodsDir: e.dir, Clock: e.clock, Mounter: e.mounter, CSI: f, BootID: "boot-2"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rebooted.SetUp(ctx, pod); err != nil {
		t.Fatal(err)
	}
	if n, _ := f.calls(); n != 2 {
		t.Errorf("%d publications after a reboot, want 2", n)
	}
}

// TestCSIFSGroup: the pod's fsGroup is applied to the target when the
// mounter says the kubelet must, and the volume is writable.
func TestCSIFSGroup(t *testing.T) {
	group := fsGroupForTest()
	for _, tc := range []struct {
		name     string
		apply    bool
		readOnly bool
		want     bool
	}{
		{"kubelet applies", true, false, true},
		{"driver applies or none", false, false, false},
		{"read-only", true, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, _ := csiEnv(t, csi.Published{ApplyFSGroup: tc.apply})
			pod := inlineCSIPod(tc.readOnly)
			pod.Spec.SecurityContext = &corev1.PodSecurityContext{FSGroup: &group}
			paths, err := e.m.SetUp(context.Background(), pod)
			if err != nil {
				t.Fatal(err)
			}
			info, err := os.Stat(paths["scratch"])
			if err != nil {
				t.Fatal(err)
			}
			if got := int64(info.Sys().(*syscall.Stat_t).Gid) == group; got != tc.want {
				t.Errorf("target owned by the fsGroup: %v, want %v", got, tc.want)
			}
		})
	}
}

// TestCSIClaim: a claim bound to a CSI PersistentVolume is handed to the
// mounter with the PV's handle, secrets, access modes and mount options;
// read-only when the claim asks.
func TestCSIClaim(t *testing.T) {
	pvc, pv := boundClaim("c", "pv-csi", corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
		Driver: "mock.csi", VolumeHandle: "vol-1", FSType: "xfs", VolumeAttributes: map[string]string{"a": "b"},
		NodeStageSecretRef: &corev1.SecretReference{Namespace: "sec", Name: "stage"},
	}})
	pv.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod}
	pv.Spec.MountOptions = []string{"noatime"}
	e, f := csiEnv(t, csi.Published{})
	if err := e.client.Tracker().Add(pvc); err != nil {
		t.Fatal(err)
	}
	if err := e.client.Tracker().Add(pv); err != nil {
		t.Fatal(err)
	}
	paths, err := e.m.SetUp(context.Background(), claimPod(pvcSource("c", true)))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(e.dir, "uid-1", "volumes", "kubernetes.io~csi", "pv-csi", "mount"); paths["data"] != want {
		t.Errorf("SetUp() paths = %v, want data at %s", paths, want)
	}
	want := []csi.Volume{{
		SpecName: "pv-csi", Driver: "mock.csi", Handle: "vol-1", ReadOnly: true, FSType: "xfs", MountOptions: []string{"noatime"},
		Attributes: map[string]string{"a": "b"}, AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod},
		StageSecret: &corev1.SecretReference{Namespace: "sec", Name: "stage"},
	}}
	if diff := cmp.Diff(want, f.setUps); diff != "" {
		t.Errorf("mounter SetUps (-want +got):\n%s", diff)
	}
}

// TestCSITearDown: tear-down unpublishes every CSI volume of the pod
// before anything is removed; a failed unpublication keeps the volume's
// directory (and so the pod's); standalone, a CSI volume left from a
// cluster run is never removed.
func TestCSITearDown(t *testing.T) {
	e, f := csiEnv(t, csi.Published{})
	pod := inlineCSIPod(false)
	ctx := context.Background()
	paths, err := e.m.SetUp(ctx, pod)
	if err != nil {
		t.Fatal(err)
	}
	target := paths["scratch"]
	f.downErr = errors.New("driver gone")
	if err := e.m.TearDown(ctx, pod.UID); err == nil {
		t.Fatal("TearDown() succeeded with the driver gone")
	}
	if _, err := os.Stat(target); err != nil {
		t.Errorf("the target went with a failed unpublication: %v", err)
	}
	e.m.cfg.CSI = nil
	if err := e.m.TearDown(ctx, pod.UID); err == nil {
		t.Error("TearDown() without a CSI mounter removed a CSI volume")
	}
	e.m.cfg.CSI, f.downErr = f, nil
	if err := e.m.TearDown(ctx, pod.UID); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{target, target}, f.tearDowns); diff != "" {
		t.Errorf("mounter TearDowns (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "uid-1", "volumes")); !os.IsNotExist(err) {
		t.Errorf("volumes directory after TearDown: %v", err)
	}
}

// TestCSIStandalone: without a CSI mounter (no API server) a CSI volume
// fails with a clear error.
func TestCSIStandalone(t *testing.T) {
	e := newEnv(t)
	_, err := e.m.SetUp(context.Background(), inlineCSIPod(false))
	if want := `volume "scratch": CSI volumes need an API server (berth runs standalone)`; errString(err) != want {
		t.Errorf("SetUp() error = %v, want %s", err, want)
	}
}

// TestCSIRepublishOnRefresh: a published CSI volume is not set up again
// on the pod's syncs; a refresh round asks the mounter to republish it
// (which it does when the driver wants it: requiresRepublish).
func TestCSIRepublishOnRefresh(t *testing.T) {
	pvc, pv := boundClaim("c", "pv-csi", corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "mock.csi", VolumeHandle: "vol-1"}})
	e, f := csiEnv(t, csi.Published{})
	for _, o := range []runtime.Object{pvc, pv} {
		if err := e.client.Tracker().Add(o); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	pod := claimPod(pvcSource("c", false))
	for range 2 {
		if _, err := e.m.SetUp(ctx, pod); err != nil {
			t.Fatal(err)
		}
	}
	if len(f.setUps) != 1 || len(f.republishes) != 0 {
		t.Fatalf("after two syncs: %d set-ups, %d republications; want 1 and 0", len(f.setUps), len(f.republishes))
	}
	e.m.refresh(ctx, false)
	if len(f.setUps) != 1 || len(f.republishes) != 1 || f.republishes[0].Handle != "vol-1" {
		t.Errorf("after a refresh: set-ups %v, republications %v; want vol-1 republished once", f.setUps, f.republishes)
	}
}
