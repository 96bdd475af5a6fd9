package config

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAllocatableIgnoreEviction: by default the hard thresholds are
// reserved from allocatable and enforceNodeAllocatable reaches the
// eviction manager; with --experimental-allocatable-ignore-eviction
// neither, as upstream.
func TestAllocatableIgnoreEviction(t *testing.T) {
	for _, tc := range []struct {
		args        []string
		wantIgnored bool
	}{
		{nil, false},
		{[]string{"--experimental-allocatable-ignore-eviction"}, true},
		{[]string{"--experimental-allocatable-ignore-eviction=false"}, false},
	} {
		cfg, err := Load(context.Background(), parseFlags(t, tc.args), testEnv("node-a"))
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		hard, enforce := cfg.AllocatableEvictionHard(), cfg.EvictionEnforceNodeAllocatable()
		if tc.wantIgnored {
			if hard != nil || enforce != nil {
				t.Errorf("%v: eviction hard %v and enforce %v, want none", tc.args, hard, enforce)
			}
			continue
		}
		if diff := cmp.Diff(cfg.Kubelet.EvictionHard, hard); diff != "" || len(hard) == 0 {
			t.Errorf("%v: eviction hard for allocatable (-want +got):\n%s", tc.args, diff)
		}
		if diff := cmp.Diff([]string{"pods"}, enforce); diff != "" {
			t.Errorf("%v: enforce for eviction (-want +got):\n%s", tc.args, diff)
		}
	}
}

// TestMounterPath: --experimental-mounter-path is the mount binary of nfs
// volumes, "" by default.
func TestMounterPath(t *testing.T) {
	for args, want := range map[string]string{"": "", "--experimental-mounter-path=/home/kubernetes/containerized_mounter/mounter": "/home/kubernetes/containerized_mounter/mounter"} {
		var flags []string
		if args != "" {
			flags = []string{args}
		}
		cfg, err := Load(context.Background(), parseFlags(t, flags), testEnv("node-a"))
		if err != nil {
			t.Fatalf("%v: %v", flags, err)
		}
		if cfg.MounterPath != want {
			t.Errorf("%v: MounterPath %q, want %q", flags, cfg.MounterPath, want)
		}
	}
}
