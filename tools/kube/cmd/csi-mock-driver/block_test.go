package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"golang.org/x/sys/unix"
	"k8s.io/kubernetes/test/e2e/storage/drivers/csi-test/mock/service"
)

// TestBlockVolume: a publication with a Block capability makes a block
// device at the target, of a loop device over the volume's backing file,
// whose data a second publication sees; the unpublications remove the
// nodes and the loop device goes with the last. Needs root and loop
// devices.
func TestBlockVolume(t *testing.T) {
	if _, err := os.Stat("/dev/loop-control"); err != nil || os.Geteuid() != 0 {
		t.Skip("needs root and /dev/loop-control")
	}
	d, dir, _, _ := startDriver(t, service.Config{DriverName: "csi.test.berth", DisableAttach: true})
	node := csi.NewNodeClient(dial(t, d.csiPath))
	ctx := context.Background()
	block := &csi.VolumeCapability{
		AccessType: &csi.VolumeCapability_Block{Block: &csi.VolumeCapability_BlockVolume{}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
	}
	var targets []string
	for _, pod := range []string{"a", "b"} {
		if err := os.MkdirAll(filepath.Join(dir, "publish"), 0o750); err != nil {
			t.Fatal(err)
		}
		target := filepath.Join(dir, "publish", pod)
		_, err := node.NodePublishVolume(ctx, &csi.NodePublishVolumeRequest{VolumeId: "1", TargetPath: target, VolumeCapability: block})
		if err != nil {
			t.Fatalf("NodePublishVolume %s: %v", pod, err)
		}
		var st unix.Stat_t
		if err := unix.Stat(target, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFBLK {
			t.Fatalf("target %s: %v, mode %o; want a block device", target, err, st.Mode)
		}
		targets = append(targets, target)
	}
	// Written through one, read through the other.
	if err := os.WriteFile(targets[0], []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(targets[1])
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	_, err = f.Read(buf)
	f.Close()
	if err != nil || string(buf) != "hello" {
		t.Errorf("read %q, %v through the second publication", buf, err)
	}
	d.blocks.mu.Lock()
	loop := d.blocks.loops["1"]
	d.blocks.mu.Unlock()
	if loop == nil {
		t.Fatal("no loop device for volume 1")
	}
	loopPath := loop.f.Name()
	for _, target := range targets {
		if _, err := node.NodeUnpublishVolume(ctx, &csi.NodeUnpublishVolumeRequest{VolumeId: "1", TargetPath: target}); err != nil {
			t.Fatalf("NodeUnpublishVolume: %v", err)
		}
		if _, err := os.Lstat(target); !os.IsNotExist(err) {
			t.Errorf("target %s after unpublish: %v", target, err)
		}
	}
	d.blocks.mu.Lock()
	left := len(d.blocks.loops)
	d.blocks.mu.Unlock()
	if left != 0 {
		t.Errorf("%d loop devices still held", left)
	}
	backing, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(loopPath), "loop", "backing_file"))
	if err == nil {
		t.Errorf("%s still attached to %s", loopPath, backing)
	}
}
