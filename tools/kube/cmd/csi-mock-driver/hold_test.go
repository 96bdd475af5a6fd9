package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/kubernetes/test/e2e/storage/drivers/csi-test/mock/service"
)

// TestHoldPublish: a NodePublishVolume waits while the hold file exists
// (its .held marker says so), other calls do not, and it goes on once
// the file is removed.
func TestHoldPublish(t *testing.T) {
	hold := filepath.Join(t.TempDir(), "hold")
	if err := os.WriteFile(hold, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	intercept := holdPublish(hold)
	handled := func(context.Context, any) (any, error) { return "done", nil }
	call := func(method string) <-chan any {
		out := make(chan any, 1)
		go func() {
			r, _ := intercept(context.Background(), nil, &grpc.UnaryServerInfo{FullMethod: method}, handled)
			out <- r
		}()
		return out
	}
	if r := <-call("/csi.v1.Node/NodeStageVolume"); r != "done" {
		t.Fatalf("stage = %v, want it answered at once", r)
	}
	publish := call("/csi.v1.Node/NodePublishVolume")
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(hold + ".held"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no .held marker: the publish is not held")
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case r := <-publish:
		t.Fatalf("publish answered %v while held", r)
	case <-time.After(300 * time.Millisecond):
	}
	if err := os.Remove(hold); err != nil {
		t.Fatal(err)
	}
	if r := <-publish; r != "done" {
		t.Errorf("publish = %v after the hold, want it answered", r)
	}
}

// TestUnpublishAfterRestart: a driver started again (a fresh mock, which
// remembers no publication) unpublishes a persistent volume's target it
// finds with the pod's data in it, as a real driver's unmount would leave
// the kubelet an empty target; an unknown volume with no target stays
// NotFound.
func TestUnpublishAfterRestart(t *testing.T) {
	d, dir, _, _ := startDriver(t, service.Config{DriverName: "csi.test.berth", DisableAttach: true})
	node := csi.NewNodeClient(dial(t, d.csiPath))
	ctx := context.Background()
	target := filepath.Join(dir, "pod", "mount")
	if err := os.MkdirAll(target, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(target, "out"), []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := node.NodeUnpublishVolume(ctx, &csi.NodeUnpublishVolumeRequest{VolumeId: "1", TargetPath: target}); err != nil {
		t.Fatalf("NodeUnpublishVolume of a forgotten publication: %v", err)
	}
	if _, err := os.Lstat(target); !os.IsNotExist(err) {
		t.Errorf("target after unpublish: %v, want it removed", err)
	}
	_, err := node.NodeUnpublishVolume(ctx, &csi.NodeUnpublishVolumeRequest{VolumeId: "no-such-volume", TargetPath: target})
	if status.Code(err) != codes.NotFound {
		t.Errorf("unpublish of an unknown volume without a target: %v, want NotFound", err)
	}
}
