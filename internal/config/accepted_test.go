package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// TestAcceptedSettings: an Accepted field or flag set away from its default
// is accepted by validation and named for Load's notice; at its default it
// is not named.
func TestAcceptedSettings(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*kubeletconfigv1beta1.KubeletConfiguration)
		args   []string
		want   []string
	}{
		{name: "defaults", mutate: func(*kubeletconfigv1beta1.KubeletConfiguration) {}},
		{
			name: "volumePluginDir",
			mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) {
				kc.VolumePluginDir = "/var/lib/k0s/kubelet/plugins"
			},
			want: []string{"volumePluginDir"},
		},
		{
			name:   "mounter path (honoured: nfs volumes)",
			mutate: func(*kubeletconfigv1beta1.KubeletConfiguration) {},
			args:   []string{"--experimental-mounter-path=/home/kubernetes/containerized_mounter/mounter"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kc := &kubeletconfigv1beta1.KubeletConfiguration{}
			SetDefaults(kc)
			tt.mutate(kc)
			if ps := unsupportedFields(kc); len(ps) != 0 {
				t.Errorf("unsupportedFields = %v, want none", ps)
			}
			flags := parseFlags(t, tt.args)
			if ps := unsupportedFlags(flags.fs); len(ps) != 0 {
				t.Errorf("unsupportedFlags = %v, want none", ps)
			}
			var got []string
			for _, a := range acceptedSettings(kc, flags.fs) {
				if a[1] == "" {
					t.Errorf("%s: no reason", a[0])
				}
				got = append(got, a[0])
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("accepted settings (-want +got):\n%s", diff)
			}
		})
	}
}
