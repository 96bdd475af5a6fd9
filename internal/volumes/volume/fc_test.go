package volume

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

var metav1Create = metav1.CreateOptions{}

const (
	testWWN  = "500a0981891b8dc5"
	testWWID = "3600508b400105e210000900000490000"
)

// fcTree is a host's /dev and /sys as the fc plugin reads them: disk sdb
// at target testWWN's LUN 1 (a by-path link), disk sdc by WWID (a by-id
// link), disk sdd a slave of multipath device dm-0 at LUN 2, one SCSI
// host to rescan, and each disk's SCSI delete file.
func fcTree(t *testing.T) FCHost {
	t.Helper()
	root := t.TempDir()
	h := FCHost{Dev: filepath.Join(root, "dev"), Sys: filepath.Join(root, "sys")}
	for _, d := range []string{"disk/by-path", "disk/by-id"} {
		must(t, os.MkdirAll(filepath.Join(h.Dev, d), 0o755))
	}
	for _, disk := range []string{"sdb", "sdc", "sdd", "dm-0"} {
		must(t, os.WriteFile(filepath.Join(h.Dev, disk), nil, 0o600))
		must(t, os.MkdirAll(filepath.Join(h.Sys, "block", disk, "device"), 0o755))
		must(t, os.WriteFile(filepath.Join(h.Sys, "block", disk, "device", "delete"), nil, 0o600))
	}
	must(t, os.Symlink("../../sdb", filepath.Join(h.Dev, "disk/by-path", "pci-0000:41:00.0-fc-0x"+testWWN+"-lun-1")))
	must(t, os.Symlink("../../sdd", filepath.Join(h.Dev, "disk/by-path", "fc-0x"+testWWN+"-lun-2")))
	must(t, os.Symlink("../../sdc", filepath.Join(h.Dev, "disk/by-id", "scsi-"+testWWID)))
	must(t, os.MkdirAll(filepath.Join(h.Sys, "block", "dm-0", "slaves"), 0o755))
	must(t, os.Symlink("../../sdd", filepath.Join(h.Sys, "block", "dm-0", "slaves", "sdd")))
	must(t, os.MkdirAll(filepath.Join(h.Sys, "class", "scsi_host", "host0"), 0o755))
	must(t, os.WriteFile(filepath.Join(h.Sys, "class", "scsi_host", "host0", "scan"), nil, 0o600))
	return h
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	must(t, err)
	return string(b)
}

// TestFCDiskOf: a source names its disk by target WWNs and a LUN, else by
// WWIDs (spaces as udev's underscores), as upstream's volumeSpecToMounter;
// a WWN that is no hexadecimal name and a WWID that is no single path
// element are refused, as is a source with neither (upstream's words).
func TestFCDiskOf(t *testing.T) {
	for _, tc := range []struct {
		name    string
		wwns    []string
		lun     *int32
		wwids   []string
		want    fcDisk
		global  string
		unique  corev1.UniqueVolumeName
		wantErr string
	}{
		{name: "wwns and lun", wwns: []string{testWWN, "500a0981991b8dc5"}, lun: ptr.To[int32](3),
			want: fcDisk{wwns: []string{testWWN, "500a0981991b8dc5"}, lun: "3"}, global: testWWN + "-500a0981991b8dc5-lun-3",
			unique: "kubernetes.io/fc/[" + testWWN + " 500a0981991b8dc5]:3"},
		{name: "wwids", wwids: []string{"3600508b4 00105e21"}, want: fcDisk{wwids: []string{"3600508b4_00105e21"}},
			global: "3600508b4_00105e21", unique: "kubernetes.io/fc/[3600508b4_00105e21]"},
		{name: "wwns without a lun take the wwids", wwns: []string{testWWN}, wwids: []string{testWWID},
			want: fcDisk{wwids: []string{testWWID}}, global: testWWID, unique: "kubernetes.io/fc/[" + testWWID + "]"},
		{name: "a wwn escaping", wwns: []string{"../../etc"}, lun: ptr.To[int32](0), wantErr: `fc: target WWN "../../etc" is not a hexadecimal world wide name`},
		{name: "a wwn pattern", wwns: []string{".*"}, lun: ptr.To[int32](0), wantErr: `fc: target WWN ".*" is not a hexadecimal world wide name`},
		{name: "a wwid escaping", wwids: []string{"../x"}, wantErr: `fc: WWID "../x" cannot name a disk`},
		{name: "a wwid of dots", wwids: []string{".."}, wantErr: `fc: WWID ".." cannot name a disk`},
		{name: "nothing", wwns: []string{testWWN}, wantErr: msgFCNoDiskInfo},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := fcDiskOf(tc.wwns, tc.lun, tc.wwids)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("fcDiskOf() error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			must(t, err)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(fcDisk{})); diff != "" {
				t.Errorf("fcDiskOf() (-want +got):\n%s", diff)
			}
			if g := got.globalName(); g != tc.global {
				t.Errorf("globalName() = %q, want %q", g, tc.global)
			}
			if u := got.uniqueName(); u != tc.unique {
				t.Errorf("uniqueName() = %q, want %q", u, tc.unique)
			}
			back, ok := parseFCName(got.globalName())
			if !ok || back.uniqueName() != tc.unique {
				t.Errorf("parseFCName(%q) = %+v, %v; want the disk back", got.globalName(), back, ok)
			}
		})
	}
}

// TestFCFind: a disk is found by its by-path or by-id link, its multipath
// device preferred; a disk not found rescans the SCSI hosts once and
// fails with upstream's words.
func TestFCFind(t *testing.T) {
	h := fcTree(t)
	for _, tc := range []struct {
		name string
		disk fcDisk
		want string
	}{
		{"by path", fcDisk{wwns: []string{testWWN}, lun: "1"}, filepath.Join(h.Dev, "sdb")},
		{"by path, multipath", fcDisk{wwns: []string{testWWN}, lun: "2"}, filepath.Join(h.Dev, "dm-0")},
		{"the first wwn that finds one", fcDisk{wwns: []string{testWWN, "500a0981991b8dc5"}, lun: "1"}, filepath.Join(h.Dev, "sdb")},
		{"by id", fcDisk{wwids: []string{testWWID}}, filepath.Join(h.Dev, "sdc")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := h.find(tc.disk)
			if err != nil || got != tc.want {
				t.Errorf("find() = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	scan := filepath.Join(h.Sys, "class", "scsi_host", "host0", "scan")
	if _, err := h.find(fcDisk{wwns: []string{testWWN}, lun: "9"}); err == nil || err.Error() != msgFCNoDisk {
		t.Errorf("find() of a missing LUN: %v, want %q", err, msgFCNoDisk)
	}
	if got := readString(t, scan); got != "- - -" {
		t.Errorf("scsi_host rescan wrote %q, want \"- - -\"", got)
	}
}

// fcEnv is a Manager over the fake mounter with a plugins directory and
// an fc host tree.
func fcEnv(t *testing.T) (env, FCHost, string) {
	t.Helper()
	e := newEnv(t)
	h := fcTree(t)
	plugins := filepath.Join(e.dir, "plugins")
	m, err := New(Config{PodsDir: e.dir, Client: e.client, Clock: e.clock, Mounter: e.mounter, PluginsDir: plugins, FC: h})
	must(t, err)
	e.m = m
	return e, h, plugins
}

// TestFCVolume: an inline fc volume's disk is mounted once at
// plugins/kubernetes.io/fc/<wwn>-lun-<lun> (formatted when blank: fsType
// ext4 unless set, "ro" when read-only, as upstream) and bound into each
// pod at volumes/kubernetes.io~fc/<volume>; it is in use
// (FCVolumesInUse) until the last pod's bind goes, then unmounted and
// detached (its SCSI device deleted), not before.
func TestFCVolume(t *testing.T) {
	e, h, plugins := fcEnv(t)
	ctx := context.Background()
	fc := &corev1.FCVolumeSource{TargetWWNs: []string{testWWN}, Lun: ptr.To[int32](1), FSType: "xfs"}
	first := claimPod(corev1.VolumeSource{FC: fc})
	first.Spec.Volumes = first.Spec.Volumes[:1]
	second := first.DeepCopy()
	second.UID = "uid-2"
	global := filepath.Join(plugins, "kubernetes.io", "fc", testWWN+"-lun-1")
	for _, pod := range []*corev1.Pod{first, second} {
		paths, err := e.m.SetUp(ctx, pod)
		must(t, err)
		if want := filepath.Join(e.dir, string(pod.UID), "volumes", "kubernetes.io~fc", "data"); paths["data"] != want {
			t.Errorf("SetUp() paths = %v, want data at %s", paths, want)
		}
	}
	if diff := cmp.Diff(map[string]string{global: filepath.Join(h.Dev, "sdb") + " xfs "}, e.mounter.devices); diff != "" {
		t.Errorf("disk mounts (-want +got):\n%s", diff)
	}
	inUse := []corev1.UniqueVolumeName{"kubernetes.io/fc/[" + testWWN + "]:1"}
	if diff := cmp.Diff(inUse, e.m.FCVolumesInUse()); diff != "" {
		t.Errorf("FCVolumesInUse() (-want +got):\n%s", diff)
	}
	deleted := filepath.Join(h.Sys, "block", "sdb", "device", "delete")
	must(t, e.m.TearDown(ctx, first.UID))
	if ok, _ := e.mounter.IsMountPoint(global); !ok {
		t.Fatal("the disk was unmounted while a pod still binds it")
	}
	if got := readString(t, deleted); got != "" {
		t.Fatalf("the disk was detached while a pod still binds it (%q)", got)
	}
	must(t, e.m.TearDown(ctx, second.UID))
	if ok, _ := e.mounter.IsMountPoint(global); ok {
		t.Error("the disk is still mounted after its last pod")
	}
	if _, err := os.Stat(global); !os.IsNotExist(err) {
		t.Errorf("disk mount point after the last pod: %v", err)
	}
	if got := readString(t, deleted); got != "1" {
		t.Errorf("SCSI delete of the disk after its last pod: %q, want \"1\"", got)
	}
	if got := e.m.FCVolumesInUse(); len(got) != 0 {
		t.Errorf("FCVolumesInUse() after the last pod = %v", got)
	}
}

// TestFCPersistentVolume: a claim's fc PersistentVolume is mounted as the
// inline volume, under the PV's name, read-only as the pod's claim says,
// with the PV's mountOptions; a disk that is not there fails the set-up
// with upstream's words and mounts nothing.
func TestFCPersistentVolume(t *testing.T) {
	pvc, pv := boundClaim("c", "fc-pv", corev1.PersistentVolumeSource{FC: &corev1.FCVolumeSource{WWIDs: []string{testWWID}}})
	pv.Spec.MountOptions = []string{"noatime"}
	e, h, plugins := fcEnv(t)
	_, err := e.client.CoreV1().PersistentVolumeClaims("ns").Create(context.Background(), pvc, metav1Create)
	must(t, err)
	_, err = e.client.CoreV1().PersistentVolumes().Create(context.Background(), pv, metav1Create)
	must(t, err)
	pod := claimPod(pvcSource("c", true))
	pod.Spec.Volumes = pod.Spec.Volumes[:1]
	paths, err := e.m.SetUp(context.Background(), pod)
	must(t, err)
	bind := filepath.Join(e.dir, "uid-1", "volumes", "kubernetes.io~fc", "fc-pv")
	if paths["data"] != bind {
		t.Errorf("SetUp() paths = %v, want data at %s", paths, bind)
	}
	global := filepath.Join(plugins, "kubernetes.io", "fc", testWWID)
	if diff := cmp.Diff(map[string]string{global: filepath.Join(h.Dev, "sdc") + " ext4 ro,noatime"}, e.mounter.devices); diff != "" {
		t.Errorf("disk mounts (-want +got):\n%s", diff)
	}
	if got := e.mounter.snapshot()[bind]; got != -2 {
		t.Errorf("bind of the read-only claim: %d, want a read-only bind (-2)", got)
	}

	missing := claimPod(corev1.VolumeSource{FC: &corev1.FCVolumeSource{TargetWWNs: []string{testWWN}, Lun: ptr.To[int32](7)}})
	missing.UID = "uid-3"
	missing.Spec.Volumes = missing.Spec.Volumes[:1]
	if _, err := e.m.SetUp(context.Background(), missing); err == nil || !strings.Contains(err.Error(), `volume "data": `+msgFCNoDisk) {
		t.Errorf("SetUp() of a disk not there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(plugins, "kubernetes.io", "fc", testWWN+"-lun-7")); !os.IsNotExist(err) {
		t.Errorf("mount point of a disk not there: %v", err)
	}
}

// TestFCBlockVolume: a claim's fc PersistentVolume of volumeMode Block is
// linked at volumeDevices/kubernetes.io~fc/<pv> to its disk, the pod's use
// recorded at plugins/kubernetes.io/fc/volumeDevices/<disk>/<uid>; the
// disk is detached when its last pod's link goes.
func TestFCBlockVolume(t *testing.T) {
	pvc, pv := boundClaim("c", "fc-block", corev1.PersistentVolumeSource{FC: &corev1.FCVolumeSource{TargetWWNs: []string{testWWN}, Lun: ptr.To[int32](1)}})
	blockClaim(pvc, pv)
	e, h, plugins := fcEnv(t)
	// The disk must be a block device: one of a number no driver has.
	sdb := filepath.Join(h.Dev, "sdb")
	must(t, os.Remove(sdb))
	if err := unix.Mknod(sdb, unix.S_IFBLK|0o600, int(unix.Mkdev(7, 1<<19))); err != nil {
		t.Skipf("cannot make a block device node: %v", err)
	}
	_, err := e.client.CoreV1().PersistentVolumeClaims("ns").Create(context.Background(), pvc, metav1Create)
	must(t, err)
	_, err = e.client.CoreV1().PersistentVolumes().Create(context.Background(), pv, metav1Create)
	must(t, err)
	ctx := context.Background()
	first, second := blockPod(false), blockPod(false)
	second.UID = "uid-2"
	for _, pod := range []*corev1.Pod{first, second} {
		pod.Spec.Volumes = pod.Spec.Volumes[:1]
		paths, err := e.m.SetUp(ctx, pod)
		must(t, err)
		link := filepath.Join(e.dir, string(pod.UID), "volumeDevices", "kubernetes.io~fc", "fc-block")
		if got, err := os.Readlink(link); paths["data"] != link || err != nil || got != sdb {
			t.Errorf("SetUp() paths = %v, link -> %q (%v); want data at %s -> %s", paths, got, err, link, sdb)
		}
	}
	if len(e.mounter.devices) != 0 {
		t.Errorf("a block volume was mounted: %v", e.mounter.devices)
	}
	// A later sync keeps the mapping without searching again: with the
	// by-path link gone, the pod still gets its device.
	byPath := filepath.Join(h.Dev, "disk/by-path", "pci-0000:41:00.0-fc-0x"+testWWN+"-lun-1")
	must(t, os.Rename(byPath, byPath+".away"))
	if paths, err := e.m.SetUp(ctx, first); err != nil || paths["data"] == "" {
		t.Errorf("SetUp() again = %v, %v; want the mapped device", paths, err)
	}
	must(t, os.Rename(byPath+".away", byPath))
	if diff := cmp.Diff([]corev1.UniqueVolumeName{"kubernetes.io/fc/[" + testWWN + "]:1"}, e.m.FCVolumesInUse()); diff != "" {
		t.Errorf("FCVolumesInUse() (-want +got):\n%s", diff)
	}
	deleted := filepath.Join(h.Sys, "block", "sdb", "device", "delete")
	must(t, e.m.TearDown(ctx, first.UID))
	if got := readString(t, deleted); got != "" {
		t.Fatalf("the disk was detached while a pod still maps it (%q)", got)
	}
	must(t, e.m.TearDown(ctx, second.UID))
	if got := readString(t, deleted); got != "1" {
		t.Errorf("SCSI delete of the disk after its last pod: %q, want \"1\"", got)
	}
	if _, err := os.Stat(filepath.Join(plugins, "kubernetes.io", "fc", "volumeDevices", testWWN+"-lun-1")); !os.IsNotExist(err) {
		t.Errorf("map directory after the last pod: %v", err)
	}
	if got := e.m.FCVolumesInUse(); len(got) != 0 {
		t.Errorf("FCVolumesInUse() after the last pod = %v", got)
	}
}

// TestFCDetach: a plain disk is deleted from the SCSI subsystem; a
// multipath device is flushed with multipath -f first, and a failed flush
// deletes none of its slaves (the caller retries).
func TestFCDetach(t *testing.T) {
	h := fcTree(t)
	ctx := context.Background()
	must(t, h.detach(ctx, filepath.Join(h.Dev, "disk/by-id", "scsi-"+testWWID)))
	if got := readString(t, filepath.Join(h.Sys, "block", "sdc", "device", "delete")); got != "1" {
		t.Errorf("SCSI delete of sdc: %q, want \"1\"", got)
	}
	if _, err := exec.LookPath("multipath"); err == nil {
		t.Skip("multipath is installed: the test would flush a real multipath map")
	}
	t.Setenv("PATH", t.TempDir())
	if err := h.detach(ctx, filepath.Join(h.Dev, "dm-0")); err == nil || !strings.Contains(err.Error(), "fc: flush multipath device "+filepath.Join(h.Dev, "dm-0")) {
		t.Errorf("detach of a multipath device without multipath: %v", err)
	}
	if got := readString(t, filepath.Join(h.Sys, "block", "sdd", "device", "delete")); got != "" {
		t.Errorf("a slave of the multipath device was deleted (%q) though its flush failed", got)
	}
}
