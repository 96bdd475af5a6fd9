package config

import (
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
)

func TestValidateLimits(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(kc *kubeletconfigv1beta1.KubeletConfiguration)
		want   []string
	}{
		{name: "defaults"},
		{name: "podsPerCore", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) { kc.PodsPerCore = 10 }},
		{name: "podsPerCore negative", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) { kc.PodsPerCore = -1 },
			want: []string{`kubeletConfiguration field "podsPerCore": invalid value -1: must not be negative`}},
		{name: "maxOpenFiles", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) { kc.MaxOpenFiles = 4096 }},
		{name: "maxOpenFiles negative", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) { kc.MaxOpenFiles = -2 },
			want: []string{`kubeletConfiguration field "maxOpenFiles": invalid value -2: must not be negative`}},
		{name: "maxContainerRestartPeriod 1s", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) {
			kc.CrashLoopBackOff.MaxContainerRestartPeriod.Duration = time.Second
		}},
		{name: "maxContainerRestartPeriod 300s", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) {
			kc.CrashLoopBackOff.MaxContainerRestartPeriod.Duration = 300 * time.Second
		}},
		{name: "maxContainerRestartPeriod below 1s", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) {
			kc.CrashLoopBackOff.MaxContainerRestartPeriod.Duration = 999 * time.Millisecond
		}, want: []string{`kubeletConfiguration field "crashLoopBackOff.maxContainerRestartPeriod": invalid value "999ms": must be between 1s and 300s`}},
		{name: "maxContainerRestartPeriod above 300s", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) {
			kc.CrashLoopBackOff.MaxContainerRestartPeriod.Duration = 301 * time.Second
		}, want: []string{`kubeletConfiguration field "crashLoopBackOff.maxContainerRestartPeriod": invalid value "5m1s": must be between 1s and 300s`}},
		{name: "registry limits", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) {
			kc.RegistryPullQPS, kc.RegistryBurst = ptr.To[int32](0), 0
		}},
		{name: "registry limits negative", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) {
			kc.RegistryPullQPS, kc.RegistryBurst = ptr.To[int32](-1), -3
		}, want: []string{
			`kubeletConfiguration field "registryBurst": invalid value -3: must not be negative`,
			`kubeletConfiguration field "registryPullQPS": invalid value -1: must not be negative`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kc := &kubeletconfigv1beta1.KubeletConfiguration{}
			SetDefaults(kc)
			if tc.mutate != nil {
				tc.mutate(kc)
			}
			got := problemMsgs(validateLimits(kc))
			sort.Strings(got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("validateLimits (-want +got):\n%s", diff)
			}
		})
	}
}
