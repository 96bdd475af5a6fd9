package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/testing/protocmp"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
	"k8s.io/kubernetes/test/e2e/storage/drivers/csi-test/mock/service"
)

// The tests start the driver in-process and talk to it over its sockets,
// as the kubelet does. They run one at a time: the mock keeps its
// ephemeral volumes in a package variable that service.New resets.

// startDriver starts a driver on sockets in a new short temporary
// directory (unix socket paths are limited to 107 bytes) and runs it until
// the returned cancel; done receives run's result.
func startDriver(t *testing.T, mock service.Config) (d *driver, dir string, cancel context.CancelFunc, done <-chan error) {
	t.Helper()
	dir, err := os.MkdirTemp("", "csimock")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	o := options{
		csiAddress:      filepath.Join(dir, "csi.sock"),
		registrationDir: filepath.Join(dir, "registry"),
		callLog:         filepath.Join(dir, "calls.jsonl"),
		mock:            mock,
	}
	// A stale socket, as a killed driver leaves behind.
	l, err := net.Listen("unix", o.csiAddress)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()

	d, err = start(o)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	result, exited := make(chan error, 1), make(chan struct{})
	go func() {
		result <- d.run(ctx)
		close(exited)
	}()
	t.Cleanup(func() {
		cancel()
		<-exited
	})
	return d, dir, cancel, result
}

func dial(t *testing.T, path string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient("unix://"+path, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatalf("dial %q: %v", path, err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func wait(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("driver did not stop")
		return nil
	}
}

func assertGone(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s still there after stop (Lstat: %v)", p, err)
		}
	}
}

// TestDriver registers as the kubelet would (GetInfo, NodeGetInfo on the
// endpoint it names, NotifyRegistrationStatus), mounts a volume through
// stage, publish, unpublish and unstage, and reads it all back from the
// call log.
func TestDriver(t *testing.T) {
	d, dir, cancel, done := startDriver(t, service.Config{
		DriverName:     "csi.test.berth",
		DisableAttach:  true,
		EnableTopology: true,
		AttachLimit:    7,
	})
	ctx := context.Background()

	if want := filepath.Join(dir, "registry", "csi.test.berth-reg.sock"); d.regPath != want {
		t.Fatalf("registration socket %q, want %q", d.regPath, want)
	}
	reg := registerapi.NewRegistrationClient(dial(t, d.regPath))
	info, err := reg.GetInfo(ctx, &registerapi.InfoRequest{})
	if err != nil {
		t.Fatalf("GetInfo: %v", err)
	}
	wantInfo := &registerapi.PluginInfo{
		Type:              "CSIPlugin",
		Name:              "csi.test.berth",
		Endpoint:          filepath.Join(dir, "csi.sock"),
		SupportedVersions: []string{"1.0.0"},
	}
	if diff := cmp.Diff(wantInfo, info, protocmp.Transform()); diff != "" {
		t.Errorf("GetInfo (-want +got):\n%s", diff)
	}

	node := csi.NewNodeClient(dial(t, info.GetEndpoint()))
	nodeInfo, err := node.NodeGetInfo(ctx, &csi.NodeGetInfoRequest{})
	if err != nil {
		t.Fatalf("NodeGetInfo: %v", err)
	}
	wantNodeInfo := &csi.NodeGetInfoResponse{
		NodeId:             "csi.test.berth",
		MaxVolumesPerNode:  7,
		AccessibleTopology: &csi.Topology{Segments: map[string]string{"io.kubernetes.storage.mock/node": "some-mock-node"}},
	}
	if diff := cmp.Diff(wantNodeInfo, nodeInfo, protocmp.Transform()); diff != "" {
		t.Errorf("NodeGetInfo (-want +got):\n%s", diff)
	}
	if _, err := reg.NotifyRegistrationStatus(ctx, &registerapi.RegistrationStatus{PluginRegistered: true}); err != nil {
		t.Fatalf("NotifyRegistrationStatus: %v", err)
	}

	mountVolume(t, node, dir)

	cancel()
	if err := wait(t, done); err != nil {
		t.Errorf("run after cancel: %v, want nil", err)
	}
	assertGone(t, d.csiPath, d.regPath)

	calls := readCallLog(t, filepath.Join(dir, "calls.jsonl"))
	var methods []string
	for _, c := range calls {
		methods = append(methods, c.Method)
	}
	wantMethods := []string{
		"/pluginregistration.Registration/GetInfo",
		"/csi.v1.Node/NodeGetInfo",
		"/pluginregistration.Registration/NotifyRegistrationStatus",
		"/csi.v1.Node/NodeStageVolume",
		"/csi.v1.Node/NodePublishVolume",
		"/csi.v1.Node/NodePublishVolume",
		"/csi.v1.Node/NodeUnpublishVolume",
		"/csi.v1.Node/NodeUnstageVolume",
	}
	if diff := cmp.Diff(wantMethods, methods); diff != "" {
		t.Fatalf("call log methods (-want +got):\n%s", diff)
	}
	for i, c := range calls {
		if c.Time == "" {
			t.Errorf("call %d (%s) has no time", i, c.Method)
		}
	}
	if c := calls[1]; c.Code != "OK" || c.Error != "" {
		t.Errorf("NodeGetInfo logged code %q error %q, want OK and none", c.Code, c.Error)
	}
	var gotNodeInfo csi.NodeGetInfoResponse
	if err := protojson.Unmarshal(calls[1].Response, &gotNodeInfo); err != nil {
		t.Fatalf("decode NodeGetInfo response %s: %v", calls[1].Response, err)
	}
	if diff := cmp.Diff(wantNodeInfo, &gotNodeInfo, protocmp.Transform()); diff != "" {
		t.Errorf("logged NodeGetInfo response (-want +got):\n%s", diff)
	}

	// The publish a test would assert on: its fields, read back.
	var pub csi.NodePublishVolumeRequest
	if err := protojson.Unmarshal(calls[4].Request, &pub); err != nil {
		t.Fatalf("decode NodePublishVolume request %s: %v", calls[4].Request, err)
	}
	if diff := cmp.Diff(publishRequest(dir), &pub, protocmp.Transform()); diff != "" {
		t.Errorf("logged NodePublishVolume request (-want +got):\n%s", diff)
	}
	for _, field := range []string{`"target_path"`, `"staging_target_path"`, `"volume_context"`} {
		if !strings.Contains(string(calls[4].Request), field) {
			t.Errorf("logged request %s lacks the proto field name %s", calls[4].Request, field)
		}
	}
	// The failed publish: the code and message, no response.
	if c := calls[5]; c.Code != "NotFound" || c.Error != "404" || c.Response != nil {
		t.Errorf("failed publish logged as code %q error %q response %s, want NotFound, 404, none", c.Code, c.Error, c.Response)
	}
}

func publishRequest(dir string) *csi.NodePublishVolumeRequest {
	return &csi.NodePublishVolumeRequest{
		VolumeId:          "1",
		StagingTargetPath: filepath.Join(dir, "staging"),
		TargetPath:        filepath.Join(dir, "pod", "mount"),
		VolumeCapability:  mountCapability(),
		VolumeContext:     map[string]string{"csi.storage.k8s.io/pod.name": "p"},
	}
}

func mountCapability() *csi.VolumeCapability {
	return &csi.VolumeCapability{
		AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{FsType: "ext4"}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
	}
}

// mountVolume stages and publishes volume "1" (one of the mock's three),
// fails to publish an unknown volume, then unpublishes and unstages,
// checking what the mock does to the target directory.
func mountVolume(t *testing.T, node csi.NodeClient, dir string) {
	t.Helper()
	ctx := context.Background()
	staging := filepath.Join(dir, "staging")
	if err := os.MkdirAll(filepath.Join(dir, "pod"), 0o750); err != nil {
		t.Fatal(err)
	}
	if _, err := node.NodeStageVolume(ctx, &csi.NodeStageVolumeRequest{
		VolumeId: "1", StagingTargetPath: staging, VolumeCapability: mountCapability(),
	}); err != nil {
		t.Fatalf("NodeStageVolume: %v", err)
	}
	pub := publishRequest(dir)
	if _, err := node.NodePublishVolume(ctx, pub); err != nil {
		t.Fatalf("NodePublishVolume: %v", err)
	}
	if fi, err := os.Stat(pub.TargetPath); err != nil || !fi.IsDir() {
		t.Errorf("target %s after publish: %v, want a directory", pub.TargetPath, err)
	}
	unknown := publishRequest(dir)
	unknown.VolumeId = "404"
	if _, err := node.NodePublishVolume(ctx, unknown); err == nil {
		t.Errorf("NodePublishVolume of unknown volume 404 succeeded")
	}
	if _, err := node.NodeUnpublishVolume(ctx, &csi.NodeUnpublishVolumeRequest{VolumeId: "1", TargetPath: pub.TargetPath}); err != nil {
		t.Fatalf("NodeUnpublishVolume: %v", err)
	}
	assertGone(t, pub.TargetPath)
	if _, err := node.NodeUnstageVolume(ctx, &csi.NodeUnstageVolumeRequest{VolumeId: "1", StagingTargetPath: staging}); err != nil {
		t.Fatalf("NodeUnstageVolume: %v", err)
	}
}

func readCallLog(t *testing.T, path string) []call {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var calls []call
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var c call
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("call log line %q: %v", sc.Text(), err)
		}
		calls = append(calls, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return calls
}

// TestFailedRegistrationStops: a kubelet's PluginRegistered false stops
// the driver with an error (main exits 1) and removes its sockets.
func TestFailedRegistrationStops(t *testing.T) {
	d, _, _, done := startDriver(t, service.Config{DriverName: service.Name})
	reg := registerapi.NewRegistrationClient(dial(t, d.regPath))
	// The driver may stop before the answer reaches us; either is fine.
	_, _ = reg.NotifyRegistrationStatus(context.Background(), &registerapi.RegistrationStatus{Error: "version 9 not supported"})
	err := wait(t, done)
	if err == nil || !strings.Contains(err.Error(), "version 9 not supported") {
		t.Errorf("run: %v, want the kubelet's error", err)
	}
	assertGone(t, d.csiPath, d.regPath)
}

func TestParseFlags(t *testing.T) {
	base := options{
		csiAddress:      "/tmp/csi.sock",
		registrationDir: "/var/lib/kubelet/plugins_registry",
		mock:            service.Config{DriverName: "io.kubernetes.storage.mock"},
	}
	tests := []struct {
		name    string
		args    []string
		want    func(*options)
		wantErr bool
	}{
		{name: "defaults", args: []string{"--csi-address=/tmp/csi.sock"}},
		{
			name: "every flag",
			args: []string{
				"--csi-address=/tmp/csi.sock", "--registration-dir=/r", "--call-log=/tmp/calls",
				"--name=n", "--enable-topology", "--attach-limit=3", "--node-expansion-required",
				"--disable-attach", "--permissive-target-path", "--enable-volume-mount-group",
			},
			want: func(o *options) {
				o.registrationDir = "/r"
				o.callLog = "/tmp/calls"
				o.mock = service.Config{
					DriverName: "n", EnableTopology: true, AttachLimit: 3, NodeExpansionRequired: true,
					DisableAttach: true, PermissiveTargetPath: true, VolumeMountGroupRequired: true,
				}
			},
		},
		{name: "no csi address", args: nil, wantErr: true},
		{name: "empty name", args: []string{"--csi-address=/tmp/csi.sock", "--name="}, wantErr: true},
		{name: "argument", args: []string{"--csi-address=/tmp/csi.sock", "extra"}, wantErr: true},
		{name: "node id", args: []string{"--csi-address=/tmp/csi.sock", "--node-id=n"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseFlags(tt.args, io.Discard)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("parseFlags(%q) = %+v, want an error", tt.args, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseFlags(%q): %v", tt.args, err)
			}
			want := base
			if tt.want != nil {
				tt.want(&want)
			}
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(options{})); diff != "" {
				t.Errorf("parseFlags(%q) (-want +got):\n%s", tt.args, diff)
			}
		})
	}
}

// TestListenUnixRefusesNonSocket: only a stale socket is removed, never a
// file or directory that happens to be at --csi-address.
func TestListenUnixRefusesNonSocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "csi.sock")
	if err := os.WriteFile(path, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	if l, err := listenUnix(path); err == nil {
		l.Close()
		t.Fatalf("listenUnix over a regular file succeeded")
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "keep" {
		t.Errorf("file after listenUnix: %q, %v; want it untouched", b, err)
	}
}

// TestEphemeralVolume: an inline (ephemeral) volume, which the v1.37.2 mock
// panics on, is published into a target directory the driver creates and
// unpublished by removing it, its stats are its target's filesystem; a
// persistent one is still the mock's.
func TestEphemeralVolume(t *testing.T) {
	d, dir, _, _ := startDriver(t, service.Config{DriverName: "csi.test.berth", DisableAttach: true})
	node := csi.NewNodeClient(dial(t, d.csiPath))
	ctx := context.Background()
	if err := os.MkdirAll(filepath.Join(dir, "pod"), 0o755); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "pod", "mount")
	pub := &csi.NodePublishVolumeRequest{
		VolumeId: "csi-0123", TargetPath: target, VolumeCapability: mountCapability(),
		VolumeContext: map[string]string{ephemeralKey: "true", "csi.storage.k8s.io/pod.name": "p"},
	}
	if _, err := node.NodePublishVolume(ctx, pub); err != nil {
		t.Fatalf("ephemeral NodePublishVolume: %v", err)
	}
	if info, err := os.Stat(target); err != nil || !info.IsDir() {
		t.Fatalf("target after publish: %v", err)
	}
	stats, err := node.NodeGetVolumeStats(ctx, &csi.NodeGetVolumeStatsRequest{VolumeId: "csi-0123", VolumePath: target})
	if err != nil {
		t.Fatalf("ephemeral NodeGetVolumeStats: %v", err)
	}
	if u := stats.GetUsage(); len(u) != 2 || u[0].GetUnit() != csi.VolumeUsage_BYTES || u[0].GetTotal() <= 0 || u[1].GetUnit() != csi.VolumeUsage_INODES {
		t.Errorf("ephemeral volume stats %v, want the target's filesystem in bytes and inodes", u)
	}
	if _, err := node.NodeUnpublishVolume(ctx, &csi.NodeUnpublishVolumeRequest{VolumeId: "csi-0123", TargetPath: target}); err != nil {
		t.Fatalf("ephemeral NodeUnpublishVolume: %v", err)
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Errorf("target after unpublish: %v", err)
	}
	persistent := publishRequest(dir)
	persistent.VolumeId = "no-such-volume"
	if _, err := node.NodePublishVolume(ctx, persistent); status.Code(err) != codes.NotFound {
		t.Errorf("persistent publish of an unknown volume: %v, want the mock's NotFound", err)
	}
}
