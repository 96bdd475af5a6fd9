package main

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"sync"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/kubernetes/test/e2e/storage/drivers/csi-test/mock/service"
)

// ephemeralKey is the volume context key by which the kubelet marks an
// inline (ephemeral) CSI volume (with podInfoOnMount).
const ephemeralKey = "csi.storage.k8s.io/ephemeral"

// ephemeralNode is the mock's node service with inline volumes served: in
// k8s.io/kubernetes v1.37.2 the mock dereferences the (absent) volume of
// an ephemeral NodePublishVolume and panics, and would not create its
// target. Here an ephemeral publication creates the target directory, as
// a driver does, and its unpublication removes it; NodeGetVolumeStats of
// an ephemeral publication (which the mock answers NotFound: it knows no
// such volume) is the statfs of its target, in bytes and inodes; every
// other call is the mock's, but that a publication with a Block
// capability gets a real block device at its target (blocks, block.go).
type ephemeralNode struct {
	service.Service
	blocks    *blockDevices
	mu        sync.Mutex          // guards published
	published map[string]struct{} // volume ID + target of ephemeral publications
}

func newEphemeralNode(mock service.Service, blocks *blockDevices) *ephemeralNode {
	return &ephemeralNode{Service: mock, blocks: blocks, published: map[string]struct{}{}}
}

func (n *ephemeralNode) NodePublishVolume(ctx context.Context, req *csi.NodePublishVolumeRequest) (*csi.NodePublishVolumeResponse, error) {
	if req.GetVolumeContext()[ephemeralKey] != "true" {
		resp, err := n.Service.NodePublishVolume(ctx, req)
		if err == nil && req.GetVolumeCapability().GetBlock() != nil {
			err = n.blocks.publish(req.GetVolumeId(), req.GetTargetPath())
		}
		if err != nil {
			return nil, err
		}
		return resp, nil
	}
	if req.GetVolumeId() == "" || req.GetTargetPath() == "" || req.GetVolumeCapability() == nil {
		return nil, status.Error(codes.InvalidArgument, "volume ID, target path and capability are required")
	}
	if err := os.Mkdir(req.GetTargetPath(), 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, status.Errorf(codes.Internal, "create target %q: %v", req.GetTargetPath(), err)
	}
	n.mu.Lock()
	n.published[req.GetVolumeId()+"\x00"+req.GetTargetPath()] = struct{}{}
	n.mu.Unlock()
	return &csi.NodePublishVolumeResponse{}, nil
}

func (n *ephemeralNode) NodeUnpublishVolume(ctx context.Context, req *csi.NodeUnpublishVolumeRequest) (*csi.NodeUnpublishVolumeResponse, error) {
	key := req.GetVolumeId() + "\x00" + req.GetTargetPath()
	n.mu.Lock()
	_, ephemeral := n.published[key]
	delete(n.published, key)
	n.mu.Unlock()
	if !ephemeral {
		resp, err := n.unpublishPersistent(ctx, req)
		if err == nil {
			n.blocks.unpublish(req.GetVolumeId(), req.GetTargetPath())
		}
		return resp, err
	}
	if err := os.RemoveAll(req.GetTargetPath()); err != nil {
		return nil, status.Errorf(codes.Internal, "remove target %q: %v", req.GetTargetPath(), err)
	}
	return &csi.NodeUnpublishVolumeResponse{}, nil
}

// unpublishPersistent is the mock's NodeUnpublishVolume, with the target
// removed even when the mock has forgotten the publication (it restarted
// under a running pod): a real driver finds its publications on the node
// (mounted at their targets), not in its memory, and its unmount leaves
// the kubelet an empty target to remove. A volume the mock does not know
// with no target left stays NotFound.
func (n *ephemeralNode) unpublishPersistent(ctx context.Context, req *csi.NodeUnpublishVolumeRequest) (*csi.NodeUnpublishVolumeResponse, error) {
	resp, err := n.Service.NodeUnpublishVolume(ctx, req)
	if err == nil || status.Code(err) == codes.NotFound {
		if _, statErr := os.Lstat(req.GetTargetPath()); statErr == nil {
			if err := os.RemoveAll(req.GetTargetPath()); err != nil {
				return nil, status.Errorf(codes.Internal, "remove target %q: %v", req.GetTargetPath(), err)
			}
			return &csi.NodeUnpublishVolumeResponse{}, nil
		}
	}
	return resp, err
}

func (n *ephemeralNode) NodeGetVolumeStats(ctx context.Context, req *csi.NodeGetVolumeStatsRequest) (*csi.NodeGetVolumeStatsResponse, error) {
	n.mu.Lock()
	_, ephemeral := n.published[req.GetVolumeId()+"\x00"+req.GetVolumePath()]
	n.mu.Unlock()
	if !ephemeral {
		return n.Service.NodeGetVolumeStats(ctx, req)
	}
	var st unix.Statfs_t
	if err := unix.Statfs(req.GetVolumePath(), &st); err != nil {
		return nil, status.Errorf(codes.NotFound, "statfs %q: %v", req.GetVolumePath(), err)
	}
	bsize := int64(st.Bsize)
	return &csi.NodeGetVolumeStatsResponse{Usage: []*csi.VolumeUsage{
		{Unit: csi.VolumeUsage_BYTES, Total: int64(st.Blocks) * bsize, Available: int64(st.Bavail) * bsize, Used: int64(st.Blocks-st.Bfree) * bsize},
		{Unit: csi.VolumeUsage_INODES, Total: int64(st.Files), Available: int64(st.Ffree), Used: int64(st.Files - st.Ffree)},
	}}, nil
}
