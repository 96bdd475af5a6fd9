package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
)

func TestBlockProfiling(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(kc *kubeletconfigv1beta1.KubeletConfiguration)
		want   bool
	}{
		{name: "default off"},
		{name: "contention profiling", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) {}, want: true},
		{name: "no server", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) { kc.EnableServer = ptr.To(false) }},
		{name: "no debugging handlers", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) { kc.EnableDebuggingHandlers = ptr.To(false) }},
		{name: "no profiling handler", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) { kc.EnableProfilingHandler = ptr.To(false) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Config{}
			SetDefaults(&c.Kubelet)
			if tc.mutate != nil {
				c.Kubelet.EnableContentionProfiling = true
				tc.mutate(&c.Kubelet)
			}
			if diff := cmp.Diff(tc.want, c.BlockProfiling()); diff != "" {
				t.Errorf("BlockProfiling (-want +got):\n%s", diff)
			}
		})
	}
}
