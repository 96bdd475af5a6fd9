package simdriver

import "testing"

func TestMounter(t *testing.T) {
	var m Mounter
	if err := m.MountTmpfs("/r/pods/u/volumes/secret/s/", 0); err != nil {
		t.Fatal(err)
	}
	if ok, _ := m.IsMountPoint("/r/pods/u/volumes/secret/s"); !ok {
		t.Error("tmpfs not recorded")
	}
	if err := m.Unmount("/r/pods/u/volumes/secret/s"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := m.IsMountPoint("/r/pods/u/volumes/secret/s"); ok {
		t.Error("unmounted tmpfs still recorded")
	}
	if m.BindMount("/a", "/b", true) == nil || m.MountNFS("h:/x", "/b", nil) == nil {
		t.Error("bind or nfs mount accepted")
	}
}
