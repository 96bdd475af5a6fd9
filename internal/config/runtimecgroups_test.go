package config

import (
	"context"
	"strings"
	"testing"
)

func TestRuntimeCgroups(t *testing.T) {
	for _, tc := range []struct {
		arg, wantErr string
	}{
		{"", ""},
		{"/system.slice/containerd.service", ""},
		{"system.slice/containerd.service", `flag --runtime-cgroups: "system.slice/containerd.service" is not an absolute cgroup name`},
	} {
		t.Run(tc.arg, func(t *testing.T) {
			cfg, err := Load(context.Background(), parseFlags(t, []string{"--runtime-cgroups=" + tc.arg}), testEnv("node-a"))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Load error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.RuntimeCgroups != tc.arg {
				t.Errorf("RuntimeCgroups = %q, want %q", cfg.RuntimeCgroups, tc.arg)
			}
		})
	}
}
