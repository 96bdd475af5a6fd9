package cri

import (
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestParseEndpoint(t *testing.T) {
	tests := []struct {
		endpoint string
		want     string
		wantErr  bool
	}{
		{endpoint: "unix:///run/containerd/containerd.sock", want: "unix:///run/containerd/containerd.sock"},
		{endpoint: "/run/containerd/containerd.sock", want: "unix:///run/containerd/containerd.sock"},
		{endpoint: "unix://relative/cri.sock", want: "unix:relative/cri.sock"},
		{endpoint: "unix:relative.sock", want: "unix:relative.sock"},
		{endpoint: "cri.sock", want: "unix:cri.sock"},
		{endpoint: "", wantErr: true},
		{endpoint: "unix://", wantErr: true},
		{endpoint: "tcp://localhost:3735", wantErr: true},
		{endpoint: "npipe:////./pipe/containerd", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.endpoint, func(t *testing.T) {
			got, err := parseEndpoint(tc.endpoint)
			if (err != nil) != tc.wantErr {
				t.Fatalf("parseEndpoint(%q) error = %v, want error %v", tc.endpoint, err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("parseEndpoint(%q) = %q, want %q", tc.endpoint, got, tc.want)
			}
		})
	}
}

func TestCallTimeout(t *testing.T) {
	const base = 2 * time.Minute
	tests := []struct {
		name   string
		method string
		req    any
		base   time.Duration
		want   time.Duration
		wantOK bool
	}{
		{name: "plain call", method: "ContainerStatus", req: &runtimeapi.ContainerStatusRequest{}, base: base, want: base, wantOK: true},
		{name: "image call", method: "ImageStatus", req: &runtimeapi.ImageStatusRequest{}, base: base, want: base, wantOK: true},
		{name: "pull has none", method: "PullImage", req: &runtimeapi.PullImageRequest{}, base: base},
		{name: "sandbox gets twice", method: "RunPodSandbox", req: &runtimeapi.RunPodSandboxRequest{}, base: base, want: 2 * base, wantOK: true},
		{name: "stop adds grace", method: "StopContainer", req: &runtimeapi.StopContainerRequest{Timeout: 30}, base: base, want: base + 30*time.Second, wantOK: true},
		{name: "stop without grace", method: "StopContainer", req: &runtimeapi.StopContainerRequest{}, base: base, want: base, wantOK: true},
		{name: "exec adds its timeout", method: "ExecSync", req: &runtimeapi.ExecSyncRequest{Timeout: 5}, base: base, want: base + 5*time.Second, wantOK: true},
		{name: "exec without timeout has none", method: "ExecSync", req: &runtimeapi.ExecSyncRequest{}, base: base},
		{name: "checkpoint longer", method: "CheckpointContainer", req: &runtimeapi.CheckpointContainerRequest{Timeout: 600}, base: base, want: 10 * time.Minute, wantOK: true},
		{name: "checkpoint shorter", method: "CheckpointContainer", req: &runtimeapi.CheckpointContainerRequest{Timeout: 1}, base: base, want: base, wantOK: true},
		{name: "zero base disables", method: "ContainerStatus", req: &runtimeapi.ContainerStatusRequest{}},
		{name: "zero base sandbox", method: "RunPodSandbox", req: &runtimeapi.RunPodSandboxRequest{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := callTimeout(tc.method, tc.req, tc.base)
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("callTimeout(%s) = %v, %v; want %v, %v", tc.method, got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

func TestShortMethod(t *testing.T) {
	for in, want := range map[string]string{
		"/runtime.v1.RuntimeService/ContainerStatus": "ContainerStatus",
		"/runtime.v1.ImageService/PullImage":         "PullImage",
		"Version":                                    "Version",
	} {
		if got := shortMethod(in); got != want {
			t.Errorf("shortMethod(%q) = %q, want %q", in, got, want)
		}
	}
}
