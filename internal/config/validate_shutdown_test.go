package config

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

func TestValidateShutdown(t *testing.T) {
	sec := func(n int) metav1.Duration { return metav1.Duration{Duration: time.Duration(n) * time.Second} }
	tests := []struct {
		name string
		set  func(kc *kubeletconfigv1beta1.KubeletConfiguration)
		want []string
	}{
		{name: "defaults", set: func(*kubeletconfigv1beta1.KubeletConfiguration) {}},
		{name: "period with critical part", set: func(kc *kubeletconfigv1beta1.KubeletConfiguration) {
			kc.ShutdownGracePeriod, kc.ShutdownGracePeriodCriticalPods = sec(30), sec(10)
		}},
		{name: "critical over period", set: func(kc *kubeletconfigv1beta1.KubeletConfiguration) {
			kc.ShutdownGracePeriod, kc.ShutdownGracePeriodCriticalPods = sec(10), sec(30)
		}, want: []string{`kubeletConfiguration field "shutdownGracePeriodCriticalPods": invalid value "30s": must be <= shutdownGracePeriod "10s"`}},
		{name: "under a second", set: func(kc *kubeletconfigv1beta1.KubeletConfiguration) {
			kc.ShutdownGracePeriod = metav1.Duration{Duration: 500 * time.Millisecond}
		}, want: []string{`kubeletConfiguration field "shutdownGracePeriod": invalid value "500ms": must be either zero or otherwise >= 1 sec`}},
		{name: "by priority", set: func(kc *kubeletconfigv1beta1.KubeletConfiguration) {
			kc.ShutdownGracePeriodByPodPriority = []kubeletconfigv1beta1.ShutdownGracePeriodByPodPriority{{Priority: 0, ShutdownGracePeriodSeconds: 10}}
		}},
		{name: "both", set: func(kc *kubeletconfigv1beta1.KubeletConfiguration) {
			kc.ShutdownGracePeriod = sec(10)
			kc.ShutdownGracePeriodByPodPriority = []kubeletconfigv1beta1.ShutdownGracePeriodByPodPriority{{Priority: 0, ShutdownGracePeriodSeconds: 10}}
		}, want: []string{`kubeletConfiguration field "shutdownGracePeriodByPodPriority": cannot be set together with shutdownGracePeriod or shutdownGracePeriodCriticalPods`}},
		{name: "negative seconds", set: func(kc *kubeletconfigv1beta1.KubeletConfiguration) {
			kc.ShutdownGracePeriodByPodPriority = []kubeletconfigv1beta1.ShutdownGracePeriodByPodPriority{{Priority: 7, ShutdownGracePeriodSeconds: -1}}
		}, want: []string{`kubeletConfiguration field "shutdownGracePeriodByPodPriority": invalid shutdownGracePeriodSeconds -1 of priority 7: must not be negative`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var kc kubeletconfigv1beta1.KubeletConfiguration
			SetDefaults(&kc)
			tt.set(&kc)
			var got []string
			for _, p := range validateShutdown(&kc) {
				got = append(got, p.msg)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("validateShutdown (-want +got):\n%s", diff)
			}
		})
	}
}
