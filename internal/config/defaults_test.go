package config

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
)

func TestSetDefaultsIsIdempotent(t *testing.T) {
	once := &kubeletconfigv1beta1.KubeletConfiguration{}
	SetDefaults(once)
	twice := once.DeepCopy()
	SetDefaults(twice)
	if diff := cmp.Diff(once, twice); diff != "" {
		t.Errorf("(-once +twice):\n%s", diff)
	}
}

func TestSetDefaultsDerivedValues(t *testing.T) {
	tests := []struct {
		name  string
		in    kubeletconfigv1beta1.KubeletConfiguration
		check func(kc *kubeletconfigv1beta1.KubeletConfiguration) (got, want any)
	}{
		{
			name: "report frequency follows an explicit update frequency",
			in:   kubeletconfigv1beta1.KubeletConfiguration{NodeStatusUpdateFrequency: durationOf(7 * time.Second)},
			check: func(kc *kubeletconfigv1beta1.KubeletConfiguration) (any, any) {
				return kc.NodeStatusReportFrequency.Duration, 7 * time.Second
			},
		},
		{
			name: "report frequency defaults to 5m",
			check: func(kc *kubeletconfigv1beta1.KubeletConfiguration) (any, any) {
				return kc.NodeStatusReportFrequency.Duration, 5 * time.Minute
			},
		},
		{
			name: "parallel pulls turn serialized pulls off",
			in:   kubeletconfigv1beta1.KubeletConfiguration{MaxParallelImagePulls: ptr.To[int32](3)},
			check: func(kc *kubeletconfigv1beta1.KubeletConfiguration) (any, any) {
				return *kc.SerializeImagePulls, false
			},
		},
		{
			name: "one parallel pull keeps serialized pulls",
			in:   kubeletconfigv1beta1.KubeletConfiguration{MaxParallelImagePulls: ptr.To[int32](1)},
			check: func(kc *kubeletconfigv1beta1.KubeletConfiguration) (any, any) {
				return *kc.SerializeImagePulls, true
			},
		},
		{
			name: "negative pod pids limit becomes -1",
			in:   kubeletconfigv1beta1.KubeletConfiguration{PodPidsLimit: ptr.To[int64](-5)},
			check: func(kc *kubeletconfigv1beta1.KubeletConfiguration) (any, any) {
				return *kc.PodPidsLimit, int64(-1)
			},
		},
		{
			name: "explicit empty resolvConf is kept",
			in:   kubeletconfigv1beta1.KubeletConfiguration{ResolverConfig: ptr.To("")},
			check: func(kc *kubeletconfigv1beta1.KubeletConfiguration) (any, any) {
				return *kc.ResolverConfig, ""
			},
		},
		{
			name: "explicit healthzPort 0 is kept",
			in:   kubeletconfigv1beta1.KubeletConfiguration{HealthzPort: ptr.To[int32](0)},
			check: func(kc *kubeletconfigv1beta1.KubeletConfiguration) (any, any) {
				return *kc.HealthzPort, int32(0)
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kc := tc.in.DeepCopy()
			SetDefaults(kc)
			got, want := tc.check(kc)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func durationOf(d time.Duration) metav1.Duration { return metav1.Duration{Duration: d} }
