package csi

import (
	"errors"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/berthk8s/berth/internal/volumes/csi/csifake"
)

func dialFake(t *testing.T, cfg csifake.Config) (*csifake.Driver, *NodeClient) {
	t.Helper()
	drv, endpoint := startDriver(t, cfg)
	c, err := Dial("unix://" + endpoint)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return drv, c
}

func TestNodeGetInfo(t *testing.T) {
	_, c := dialFake(t, csifake.Config{NodeID: "n1", MaxVolumesPerNode: 7, Topology: map[string]string{"zone": "z1"}})
	got, err := c.NodeGetInfo(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(NodeInfo{NodeID: "n1", MaxVolumesPerNode: 7, Topology: map[string]string{"zone": "z1"}}, got); diff != "" {
		t.Errorf("NodeGetInfo (-want +got):\n%s", diff)
	}
}

func TestNodeGetCapabilities(t *testing.T) {
	for _, tc := range []struct {
		name string
		caps []csipb.NodeServiceCapability_RPC_Type
		want NodeCapabilities
	}{
		{name: "none"},
		{name: "stage", caps: []csipb.NodeServiceCapability_RPC_Type{csipb.NodeServiceCapability_RPC_STAGE_UNSTAGE_VOLUME}, want: NodeCapabilities{StageUnstageVolume: true}},
		{name: "all", caps: []csipb.NodeServiceCapability_RPC_Type{
			csipb.NodeServiceCapability_RPC_STAGE_UNSTAGE_VOLUME, csipb.NodeServiceCapability_RPC_GET_VOLUME_STATS,
			csipb.NodeServiceCapability_RPC_EXPAND_VOLUME, csipb.NodeServiceCapability_RPC_SINGLE_NODE_MULTI_WRITER,
			csipb.NodeServiceCapability_RPC_VOLUME_MOUNT_GROUP, csipb.NodeServiceCapability_RPC_GET_VOLUME_HEALTH,
		}, want: NodeCapabilities{StageUnstageVolume: true, GetVolumeStats: true, ExpandVolume: true,
			SingleNodeMultiWriter: true, VolumeMountGroup: true, GetVolumeHealth: true}},
		{name: "unknown ones ignored", caps: []csipb.NodeServiceCapability_RPC_Type{4, csipb.NodeServiceCapability_RPC_GET_STORAGE_HEALTH, csipb.NodeServiceCapability_RPC_EXPAND_VOLUME},
			want: NodeCapabilities{ExpandVolume: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, c := dialFake(t, csifake.Config{Capabilities: tc.caps})
			got, err := c.NodeGetCapabilities(testContext(t))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("capabilities (-want +got):\n%s", diff)
			}
		})
	}
}

// The volume calls pass their requests through as they are, and the
// driver's errors back with their codes.
func TestNodeVolumeCalls(t *testing.T) {
	stats := &csipb.NodeGetVolumeStatsResponse{Usage: []*csipb.VolumeUsage{{Total: 100, Used: 40, Unit: csipb.VolumeUsage_BYTES}}}
	drv, c := dialFake(t, csifake.Config{Stats: stats})
	ctx := testContext(t)
	stage := &csipb.NodeStageVolumeRequest{VolumeId: "v1", StagingTargetPath: "/staging", PublishContext: map[string]string{"k": "v"}}
	unstage := &csipb.NodeUnstageVolumeRequest{VolumeId: "v1", StagingTargetPath: "/staging"}
	publish := &csipb.NodePublishVolumeRequest{VolumeId: "v1", StagingTargetPath: "/staging", TargetPath: "/target", Readonly: true}
	unpublish := &csipb.NodeUnpublishVolumeRequest{VolumeId: "v1", TargetPath: "/target"}
	getStats := &csipb.NodeGetVolumeStatsRequest{VolumeId: "v1", VolumePath: "/target"}
	expand := &csipb.NodeExpandVolumeRequest{VolumeId: "v1", VolumePath: "/target", CapacityRange: &csipb.CapacityRange{RequiredBytes: 1 << 30}}
	for _, err := range []error{
		c.NodeStageVolume(ctx, stage), c.NodeUnstageVolume(ctx, unstage),
		c.NodePublishVolume(ctx, publish), c.NodeUnpublishVolume(ctx, unpublish),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	gotStats, err := c.NodeGetVolumeStats(ctx, getStats)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(stats, gotStats, protocmp.Transform()); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
	expanded, err := c.NodeExpandVolume(ctx, expand)
	if err != nil {
		t.Fatal(err)
	}
	if expanded.GetCapacityBytes() != 1<<30 {
		t.Errorf("expanded to %d bytes, want %d", expanded.GetCapacityBytes(), 1<<30)
	}
	want := []csifake.Call{
		{Method: "NodeStageVolume", Request: stage}, {Method: "NodeUnstageVolume", Request: unstage},
		{Method: "NodePublishVolume", Request: publish}, {Method: "NodeUnpublishVolume", Request: unpublish},
		{Method: "NodeGetVolumeStats", Request: getStats}, {Method: "NodeExpandVolume", Request: expand},
	}
	if diff := cmp.Diff(want, drv.Calls(), protocmp.Transform()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}

	drv.Fail("NodePublishVolume", status.Error(codes.Aborted, "operation pending"))
	err = c.NodePublishVolume(ctx, proto.Clone(publish).(*csipb.NodePublishVolumeRequest))
	if status.Code(err) != codes.Aborted {
		t.Errorf("NodePublishVolume error %v, want the driver's Aborted", err)
	}
}

func TestDialRefusesAnEmptyEndpoint(t *testing.T) {
	for _, endpoint := range []string{"", "unix://"} {
		if _, err := Dial(endpoint); err == nil {
			t.Errorf("Dial(%q): no error", endpoint)
		}
	}
}

// TestDriverError: upstream's isFinalError, and the wrapping.
func TestDriverError(t *testing.T) {
	for code, uncertain := range map[codes.Code]bool{
		codes.Canceled: true, codes.DeadlineExceeded: true, codes.Unavailable: true, codes.ResourceExhausted: true, codes.Aborted: true,
		codes.Internal: false, codes.InvalidArgument: false, codes.NotFound: false, codes.FailedPrecondition: false, codes.Unknown: false,
	} {
		cause := status.Error(code, "x")
		err := driverError("NodePublishVolume", "/t", cause)
		if IsUncertain(err) != uncertain || !errors.Is(err, cause) {
			t.Errorf("%v: IsUncertain %v (want %v), wraps the cause %v", code, IsUncertain(err), uncertain, errors.Is(err, cause))
		}
	}
	if !IsUncertain(driverError("NodePublishVolume", "/t", errors.New("not gRPC"))) {
		t.Error("an error without a gRPC status is final")
	}
}
