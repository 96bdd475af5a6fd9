package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// TestEvictionHardDefaults: unset evictionHard takes upstream's defaults;
// a set one is kept as written, or gains the missing default signals with
// mergeDefaultEvictionSettings.
func TestEvictionHardDefaults(t *testing.T) {
	merge, noMerge := true, false
	tests := []struct {
		name  string
		hard  map[string]string
		merge *bool
		want  map[string]string
	}{
		{name: "unset", want: defaultEvictionHard()},
		{name: "set, no merge", hard: map[string]string{"memory.available": "1Gi"}, merge: &noMerge, want: map[string]string{"memory.available": "1Gi"}},
		{name: "explicitly empty", hard: map[string]string{}, want: map[string]string{}},
		{name: "merge keeps what is set", hard: map[string]string{"memory.available": "1Gi"}, merge: &merge, want: map[string]string{
			"memory.available": "1Gi", "nodefs.available": "10%", "nodefs.inodesFree": "5%", "imagefs.available": "15%", "imagefs.inodesFree": "5%"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kc := &kubeletconfigv1beta1.KubeletConfiguration{EvictionHard: tt.hard, MergeDefaultEvictionSettings: tt.merge}
			SetDefaults(kc)
			if diff := cmp.Diff(tt.want, kc.EvictionHard); diff != "" {
				t.Errorf("evictionHard (-want +got):\n%s", diff)
			}
		})
	}
}
