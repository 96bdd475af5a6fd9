package csi

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"strings"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// Timeout bounds every call of a driver (NodeGetInfo at registration,
// and NodeClient's calls): upstream's csiTimeout. upstream_test.go pins
// it.
const Timeout = 2 * time.Minute

// NodeInfo is what a driver's NodeGetInfo says about the node.
type NodeInfo struct {
	// NodeID is the node's ID in the driver.
	NodeID string
	// MaxVolumesPerNode is how many of the driver's volumes the node may
	// have; 0 for no limit.
	MaxVolumesPerNode int64
	// Topology is the node's accessible topology: segment keys to values.
	Topology map[string]string
}

// NodeCapabilities are the node service capabilities a driver advertises.
// CSI's VOLUME_CONDITION is gone from the spec berth builds against (its
// number is reserved); GetVolumeHealth is what upstream asks for instead.
type NodeCapabilities struct {
	StageUnstageVolume    bool // STAGE_UNSTAGE_VOLUME: NodeStageVolume and NodeUnstageVolume
	GetVolumeStats        bool // GET_VOLUME_STATS: NodeGetVolumeStats
	ExpandVolume          bool // EXPAND_VOLUME: NodeExpandVolume
	SingleNodeMultiWriter bool // SINGLE_NODE_MULTI_WRITER: the single-node access modes
	VolumeMountGroup      bool // VOLUME_MOUNT_GROUP: the driver applies the fsGroup
	GetVolumeHealth       bool // GET_VOLUME_HEALTH: NodeGetVolumeHealth
}

// NodeClient calls the node service of one CSI driver. Every call is
// bounded by Timeout (and by its context); errors are the driver's gRPC
// status errors as they came, for the caller to classify. Safe for
// concurrent use; Close it when done.
type NodeClient struct {
	conn *grpc.ClientConn
	node csipb.NodeClient
}

// Dial returns a client of the node service at endpoint, a unix socket's
// path (with or without unix://), as upstream's CSI client connects. It
// connects on the first call.
func Dial(endpoint string) (*NodeClient, error) {
	addr := strings.TrimPrefix(endpoint, "unix://")
	if addr == "" {
		return nil, errors.New("CSI endpoint is empty")
	}
	dial := func(ctx context.Context, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", addr)
	}
	conn, err := grpc.NewClient("passthrough:///csi", grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(dial), grpc.WithAuthority("localhost"))
	if err != nil {
		return nil, fmt.Errorf("connect to CSI endpoint %q: %w", endpoint, err)
	}
	return &NodeClient{conn: conn, node: csipb.NewNodeClient(conn)}, nil
}

// Close closes the connection.
func (c *NodeClient) Close() error { return c.conn.Close() }

// NodeGetInfo asks the driver what the node is to it.
func (c *NodeClient) NodeGetInfo(ctx context.Context) (NodeInfo, error) {
	resp, err := bounded(ctx, c.node.NodeGetInfo, &csipb.NodeGetInfoRequest{})
	if err != nil {
		return NodeInfo{}, err
	}
	return NodeInfo{
		NodeID:            resp.GetNodeId(),
		MaxVolumesPerNode: resp.GetMaxVolumesPerNode(),
		Topology:          maps.Clone(resp.GetAccessibleTopology().GetSegments()),
	}, nil
}

// NodeGetCapabilities asks the driver which node service capabilities it
// has. Capabilities berth does not know are ignored.
func (c *NodeClient) NodeGetCapabilities(ctx context.Context) (NodeCapabilities, error) {
	resp, err := bounded(ctx, c.node.NodeGetCapabilities, &csipb.NodeGetCapabilitiesRequest{})
	if err != nil {
		return NodeCapabilities{}, err
	}
	var caps NodeCapabilities
	for _, capability := range resp.GetCapabilities() {
		switch capability.GetRpc().GetType() {
		case csipb.NodeServiceCapability_RPC_STAGE_UNSTAGE_VOLUME:
			caps.StageUnstageVolume = true
		case csipb.NodeServiceCapability_RPC_GET_VOLUME_STATS:
			caps.GetVolumeStats = true
		case csipb.NodeServiceCapability_RPC_EXPAND_VOLUME:
			caps.ExpandVolume = true
		case csipb.NodeServiceCapability_RPC_SINGLE_NODE_MULTI_WRITER:
			caps.SingleNodeMultiWriter = true
		case csipb.NodeServiceCapability_RPC_VOLUME_MOUNT_GROUP:
			caps.VolumeMountGroup = true
		case csipb.NodeServiceCapability_RPC_GET_VOLUME_HEALTH:
			caps.GetVolumeHealth = true
		}
	}
	return caps, nil
}

// NodeStageVolume calls NodeStageVolume.
func (c *NodeClient) NodeStageVolume(ctx context.Context, req *csipb.NodeStageVolumeRequest) error {
	_, err := bounded(ctx, c.node.NodeStageVolume, req)
	return err
}

// NodeUnstageVolume calls NodeUnstageVolume.
func (c *NodeClient) NodeUnstageVolume(ctx context.Context, req *csipb.NodeUnstageVolumeRequest) error {
	_, err := bounded(ctx, c.node.NodeUnstageVolume, req)
	return err
}

// NodePublishVolume calls NodePublishVolume.
func (c *NodeClient) NodePublishVolume(ctx context.Context, req *csipb.NodePublishVolumeRequest) error {
	_, err := bounded(ctx, c.node.NodePublishVolume, req)
	return err
}

// NodeUnpublishVolume calls NodeUnpublishVolume.
func (c *NodeClient) NodeUnpublishVolume(ctx context.Context, req *csipb.NodeUnpublishVolumeRequest) error {
	_, err := bounded(ctx, c.node.NodeUnpublishVolume, req)
	return err
}

// NodeGetVolumeStats calls NodeGetVolumeStats.
func (c *NodeClient) NodeGetVolumeStats(ctx context.Context, req *csipb.NodeGetVolumeStatsRequest) (*csipb.NodeGetVolumeStatsResponse, error) {
	return bounded(ctx, c.node.NodeGetVolumeStats, req)
}

// NodeExpandVolume calls NodeExpandVolume.
func (c *NodeClient) NodeExpandVolume(ctx context.Context, req *csipb.NodeExpandVolumeRequest) (*csipb.NodeExpandVolumeResponse, error) {
	return bounded(ctx, c.node.NodeExpandVolume, req)
}

// bounded makes one call of the node service within Timeout.
func bounded[Req, Resp any](ctx context.Context, call func(context.Context, Req, ...grpc.CallOption) (Resp, error), req Req) (Resp, error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	return call(ctx, req)
}

// UncertainError is a failure of NodeStageVolume or NodePublishVolume
// after which the driver may still be working on the volume (a timeout,
// the driver unavailable or busy: upstream's UncertainProgressError). The
// caller must treat the volume as maybe published, and tear it down if
// the pod no longer wants it; the vol_data.json files stay for that.
type UncertainError struct{ Err error }

func (e *UncertainError) Error() string { return e.Err.Error() }
func (e *UncertainError) Unwrap() error { return e.Err }

// IsUncertain reports whether err is (or wraps) an UncertainError.
func IsUncertain(err error) bool {
	var u *UncertainError
	return errors.As(err, &u)
}

// driverError wraps a failed NodeStageVolume or NodePublishVolume (op) of
// path: an UncertainError unless the driver answered with a gRPC code that
// says the operation is not in progress (uncertainCode). An error without
// a gRPC status (the call never reached the driver, as far as the client
// knows) is uncertain too, as upstream's.
func driverError(op, path string, err error) error {
	wrapped := fmt.Errorf("%s at %q: %w", op, path, err)
	if st, ok := status.FromError(err); !ok || uncertainCode(st.Code()) {
		return &UncertainError{Err: wrapped}
	}
	return wrapped
}

// uncertainCode reports whether a driver's gRPC code leaves an operation
// maybe in progress (upstream's isFinalError, negated): the call was
// cancelled or timed out, the driver is unavailable or out of resources,
// or the operation is pending (Aborted). upstream_mount_test.go pins the
// list.
func uncertainCode(c codes.Code) bool {
	switch c {
	case codes.Canceled, codes.DeadlineExceeded, codes.Unavailable, codes.ResourceExhausted, codes.Aborted:
		return true
	}
	return false
}
