package kuberuntime

import "testing"

func TestWithDefaultTag(t *testing.T) {
	digest := "sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	tests := []struct {
		in, want string
		wantErr  bool
	}{
		{in: "busybox", want: "busybox:latest"},
		{in: "busybox:1.36", want: "busybox:1.36"},
		{in: "library/busybox", want: "library/busybox:latest"},
		{in: "registry.k8s.io/pause:3.10", want: "registry.k8s.io/pause:3.10"},
		{in: "localhost:5000/app", want: "localhost:5000/app:latest"},
		{in: "localhost:5000/app:v1", want: "localhost:5000/app:v1"},
		{in: "Example.COM/team/app", want: "Example.COM/team/app:latest"},
		{in: "app@" + digest, want: "app@" + digest},
		{in: "app:v1@" + digest, want: "app:v1@" + digest},
		{in: "", wantErr: true},
		{in: "Busybox", wantErr: true},
		{in: "busybox:", wantErr: true},
		{in: "busy box", wantErr: true},
		{in: "app@sha256:short", wantErr: true},
		{in: "app:bad/tag", wantErr: true},
		{in: "-app", wantErr: true},
	}
	for _, tt := range tests {
		got, err := withDefaultTag(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("withDefaultTag(%q) error = %v, wantErr %v", tt.in, err, tt.wantErr)
			continue
		}
		if got != tt.want {
			t.Errorf("withDefaultTag(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
