package selinux

import (
	"os"
	"path/filepath"
	"testing"
)

// A Fedora host's mount table, cut down: / on xfs with labels, a
// selinuxfs, a tmpfs with labels, an NFS export without, and a CSI
// driver's publication on ext4 with labels stacked over a directory of
// the root.
const fedoraMounts = `22 1 253:0 / / rw,relatime shared:1 - xfs /dev/mapper/root rw,seclabel,attr2,inode64
23 22 0:21 / /sys rw,nosuid,nodev,noexec,relatime shared:2 - sysfs sysfs rw,seclabel
24 23 0:20 / /sys/fs/selinux rw,nosuid,noexec,relatime shared:3 - selinuxfs selinuxfs rw
25 22 0:45 / /var/lib/kubelet/pods/u1/volumes/kubernetes.io~empty-dir/cache rw,relatime shared:20 - tmpfs tmpfs rw,seclabel,size=1024k
26 22 0:46 / /mnt/nfs rw,relatime shared:21 - nfs4 server:/export rw,vers=4.2
27 22 7:0 / /var/lib/kubelet/pods/u1/volumes/kubernetes.io~csi/pvc-1/mount rw,relatime shared:22 - ext4 /dev/loop0 rw
28 27 7:1 / /var/lib/kubelet/pods/u1/volumes/kubernetes.io~csi/pvc-1/mount rw,relatime shared:23 - ext4 /dev/loop1 rw,seclabel
`

// Debian's: no selinuxfs.
const debianMounts = `22 1 253:0 / / rw,relatime shared:1 - ext4 /dev/vda1 rw
23 22 0:21 / /sys rw,nosuid,nodev,noexec,relatime shared:2 - sysfs sysfs rw
`

func host(t *testing.T, mounts, current string) Host {
	t.Helper()
	dir := t.TempDir()
	h := Host{MountInfo: filepath.Join(dir, "mountinfo"), AttrCurrent: filepath.Join(dir, "current")}
	if err := os.WriteFile(h.MountInfo, []byte(mounts), 0o644); err != nil {
		t.Fatal(err)
	}
	if current != "" {
		if err := os.WriteFile(h.AttrCurrent, []byte(current), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

func TestEnabled(t *testing.T) {
	for _, tc := range []struct {
		name, mounts, current string
		want                  bool
	}{
		{"enforcing or permissive, berth labelled", fedoraMounts, "system_u:system_r:kubelet_t:s0\x00", true},
		{"selinuxfs but no policy loaded", fedoraMounts, "kernel\x00", false},
		{"no selinuxfs", debianMounts, "unconfined\n", false},
		{"no attr/current (EINVAL on a kernel without SELinux)", fedoraMounts, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := host(t, tc.mounts, tc.current).Enabled(); got != tc.want {
				t.Errorf("Enabled() = %v, want %v", got, tc.want)
			}
		})
	}
	if got := (Host{MountInfo: "/nonexistent"}).Enabled(); got {
		t.Error("Enabled() with no mount table = true")
	}
}

func TestSupports(t *testing.T) {
	on := host(t, fedoraMounts, "system_u:system_r:kubelet_t:s0")
	for _, tc := range []struct {
		path string
		want bool
	}{
		{"/var/lib/kubelet/pods/u1/volumes/kubernetes.io~empty-dir/cache", true},
		{"/var/lib/kubelet/pods/u1/volumes/kubernetes.io~empty-dir/cache/sub/", true},
		{"/var/lib/kubelet/pods/u1/volumes/kubernetes.io~empty-dir/cachet", true}, // on / (xfs, labelled), not the tmpfs
		{"/mnt/nfs/data", false},
		// The mount on top: the second publication at the same point.
		{"/var/lib/kubelet/pods/u1/volumes/kubernetes.io~csi/pvc-1/mount", true},
	} {
		got, err := on.Supports(tc.path)
		if err != nil || got != tc.want {
			t.Errorf("Supports(%s) = %v, %v; want %v", tc.path, got, err, tc.want)
		}
	}
	off := host(t, debianMounts, "")
	if got, err := off.Supports("/"); got || err != nil {
		t.Errorf("Supports(/) with SELinux off = %v, %v; want false without reading the mounts", got, err)
	}
	onlySELinuxFS := "24 23 0:20 / /sys/fs/selinux rw,nosuid,noexec,relatime shared:3 - selinuxfs selinuxfs rw\n"
	if _, err := host(t, onlySELinuxFS, "system_u:system_r:kubelet_t:s0").Supports("/x"); err == nil {
		t.Error("Supports() on no mount: no error")
	}
}
