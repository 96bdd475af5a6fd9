package agent

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/config"
)

// TestSystemCgroup: systemCgroups builds a keeper (it moves nothing until
// Run), none without it, and "/" stops the start as upstream's.
func TestSystemCgroup(t *testing.T) {
	for _, tc := range []struct {
		system   string
		wantKeep bool
		wantErr  string
	}{
		{"", false, ""},
		{"/system", true, ""},
		{"/", false, `system container cannot be root ("/")`},
	} {
		t.Run(tc.system, func(t *testing.T) {
			s, err := systemCgroup(&kubeletconfigv1beta1.KubeletConfiguration{SystemCgroups: tc.system, CgroupRoot: "/"}, clock.RealClock{})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("systemCgroup(%q) error = %v, want %q", tc.system, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (s != nil) != tc.wantKeep {
				t.Errorf("systemCgroup(%q) = %v, want a keeper: %v", tc.system, s, tc.wantKeep)
			}
		})
	}
}

func TestStatsSystemCgroups(t *testing.T) {
	for _, tc := range []struct {
		name            string
		runtime, system string
		want            map[string]string
	}{
		{"none", "", "", map[string]string{}},
		{"runtime", "/system.slice/containerd.service", "", map[string]string{"runtime": "/system.slice/containerd.service"}},
		{"both", "/runtime", "/system", map[string]string{"runtime": "/runtime", "misc": "/system"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &config.Config{LegacyFlags: config.LegacyFlags{RuntimeCgroups: tc.runtime}}
			cfg.Kubelet.SystemCgroups = tc.system
			if diff := cmp.Diff(tc.want, statsSystemCgroups(cfg)); diff != "" {
				t.Errorf("statsSystemCgroups (-want +got):\n%s", diff)
			}
		})
	}
}
