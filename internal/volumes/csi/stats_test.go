package csi

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/berthk8s/berth/internal/volumes/csi/csifake"
)

func statsCaps() []csipb.NodeServiceCapability_RPC_Type {
	return []csipb.NodeServiceCapability_RPC_Type{csipb.NodeServiceCapability_RPC_GET_VOLUME_STATS}
}

// TestVolumeStats: a persistent volume's stats are asked with its handle
// and target, an inline one's with its generated handle; bytes and
// inodes are read from their units.
func TestVolumeStats(t *testing.T) {
	e := newMounterEnv(t, statsCaps())
	e.drv.SetConfig(csifake.Config{Name: testDriver, NodeID: "n1", Capabilities: statsCaps(), Stats: &csipb.NodeGetVolumeStatsResponse{
		Usage: []*csipb.VolumeUsage{
			{Unit: csipb.VolumeUsage_BYTES, Total: 1000, Available: 600, Used: 400},
			{Unit: csipb.VolumeUsage_INODES, Total: 50, Available: 40, Used: 10},
			nil,
		},
	}})
	ctx := testContext(t)
	got, err := e.m.VolumeStats(ctx, testPodUID, testPV())
	if err != nil {
		t.Fatal(err)
	}
	want := VolumeUsage{Capacity: 1000, Available: 600, Used: 400, Inodes: 50, InodesFree: 40, InodesUsed: 10}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
	inline := Volume{SpecName: "scratch", Driver: testDriver, Inline: true}
	if _, err := e.m.VolumeStats(ctx, testPodUID, inline); err != nil {
		t.Fatal(err)
	}
	calls := e.drv.CallsTo("NodeGetVolumeStats")
	if len(calls) != 2 {
		t.Fatalf("%d NodeGetVolumeStats calls, want 2: %v", len(calls), e.drv.Methods())
	}
	for i, want := range []*csipb.NodeGetVolumeStatsRequest{
		{VolumeId: testHandle, VolumePath: e.target(testPodUID, testPVName)},
		{VolumeId: fmt.Sprintf("csi-%x", sha256.Sum256([]byte(testPodUID+"scratch"))), VolumePath: e.target(testPodUID, "scratch")},
	} {
		if diff := cmp.Diff(want, calls[i].Request, protocmp.Transform()); diff != "" {
			t.Errorf("request %d (-want +got):\n%s", i, diff)
		}
	}
}

// TestVolumeStatsOnlyBytes: an answer with bytes only leaves the inodes
// at 0, as upstream (the e2e mock answers so).
func TestVolumeStatsOnlyBytes(t *testing.T) {
	e := newMounterEnv(t, statsCaps())
	e.drv.SetConfig(csifake.Config{Name: testDriver, Capabilities: statsCaps(), Stats: &csipb.NodeGetVolumeStatsResponse{
		Usage: []*csipb.VolumeUsage{{Unit: csipb.VolumeUsage_BYTES, Total: 1 << 30}},
	}})
	got, err := e.m.VolumeStats(testContext(t), testPodUID, testPV())
	if err != nil || got != (VolumeUsage{Capacity: 1 << 30}) {
		t.Errorf("usage %+v, %v; want a capacity of 1 GiB only", got, err)
	}
}

// TestVolumeStatsFailures: no capability is ErrStatsNotSupported and no
// NodeGetVolumeStats; an unregistered driver, a failed call and an answer
// without usage are errors.
func TestVolumeStatsFailures(t *testing.T) {
	ctx := testContext(t)
	e := newMounterEnv(t, nil)
	if _, err := e.m.VolumeStats(ctx, testPodUID, testPV()); !errors.Is(err, ErrStatsNotSupported) {
		t.Errorf("no GET_VOLUME_STATS: %v, want ErrStatsNotSupported", err)
	}
	if n := len(e.drv.CallsTo("NodeGetVolumeStats")); n != 0 {
		t.Errorf("%d NodeGetVolumeStats calls to a driver without the capability", n)
	}
	other := testPV()
	other.Driver = "other.example.com"
	if _, err := e.m.VolumeStats(ctx, testPodUID, other); err == nil || errors.Is(err, ErrStatsNotSupported) {
		t.Errorf("unregistered driver: %v, want an error", err)
	}

	e = newMounterEnv(t, statsCaps())
	if _, err := e.m.VolumeStats(ctx, testPodUID, testPV()); err == nil || err.Error() != msgNoUsage {
		t.Errorf("no usage: %v, want %q", err, msgNoUsage)
	}
	e.drv.Fail("NodeGetVolumeStats", status.Error(codes.NotFound, "no such volume"))
	if _, err := e.m.VolumeStats(ctx, testPodUID, testPV()); status.Code(errors.Unwrap(err)) != codes.NotFound {
		t.Errorf("failed call: %v, want the driver's NotFound", err)
	}
	bad := testPV()
	bad.SpecName = ".."
	if _, err := e.m.VolumeStats(ctx, testPodUID, bad); err == nil {
		t.Error("a volume name that is no path element was asked for")
	}
}

// TestVolumeStatsBlock: a block volume's stats are asked at its pod's
// entry at the global map path, as upstream's csiBlockMapper
// (NewMetricsCsi of <global map path>/<pod uid>).
func TestVolumeStatsBlock(t *testing.T) {
	e := newMounterEnv(t, statsCaps())
	e.drv.SetConfig(csifake.Config{Name: testDriver, Capabilities: statsCaps(), Stats: &csipb.NodeGetVolumeStatsResponse{
		Usage: []*csipb.VolumeUsage{{Unit: csipb.VolumeUsage_BYTES, Total: 1 << 30}},
	}})
	got, err := e.m.VolumeStats(testContext(t), testPodUID, blockPV())
	if err != nil || got != (VolumeUsage{Capacity: 1 << 30}) {
		t.Fatalf("usage %+v, %v; want a capacity of 1 GiB", got, err)
	}
	want := &csipb.NodeGetVolumeStatsRequest{VolumeId: testHandle, VolumePath: e.blockDir(testPVName, "dev", testPodUID)}
	if diff := cmp.Diff(want, request[*csipb.NodeGetVolumeStatsRequest](t, e.drv, "NodeGetVolumeStats"), protocmp.Transform()); diff != "" {
		t.Errorf("NodeGetVolumeStats (-want +got):\n%s", diff)
	}
	v := blockPV()
	v.SpecName = "staging"
	if _, err := e.m.VolumeStats(testContext(t), testPodUID, v); err == nil {
		t.Error("stats of a block volume named as the plugin's staging directory were asked")
	}
}
