package agent

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/config"
	"github.com/berthk8s/berth/internal/platform/machine"
	"github.com/berthk8s/berth/internal/pod/containerconfig"
	"github.com/berthk8s/berth/internal/podkit/cgroupmath"
)

func TestCFSSettings(t *testing.T) {
	for _, tc := range []struct {
		name   string
		quota  *bool
		period time.Duration
		want   cgroupmath.CFS
	}{
		{"defaults", nil, 100 * time.Millisecond, cgroupmath.CFS{Period: 100000}},
		{"quota off", ptr.To(false), 100 * time.Millisecond, cgroupmath.CFS{Unenforced: true, Period: 100000}},
		{"quota on, 5ms", ptr.To(true), 5 * time.Millisecond, cgroupmath.CFS{Period: 5000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := config.SettingsOf(&kubeletconfigv1beta1.KubeletConfiguration{CPUCFSQuota: tc.quota, CPUCFSQuotaPeriod: &metav1.Duration{Duration: tc.period}})
			if diff := cmp.Diff(tc.want, cfsSettings(set)); diff != "" {
				t.Errorf("cfsSettings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResourceSettings(t *testing.T) {
	cfs := cgroupmath.CFS{Period: 100000}
	for _, tc := range []struct {
		name   string
		v2     bool
		single *bool
		want   containerconfig.ResourceSettings
	}{
		{name: "v2, unset: the whole container is killed", v2: true, want: containerconfig.ResourceSettings{CFS: cfs, OOMGroup: true}},
		{name: "v2, false", v2: true, single: ptr.To(false), want: containerconfig.ResourceSettings{CFS: cfs, OOMGroup: true}},
		{name: "v2, true: single process", v2: true, single: ptr.To(true), want: containerconfig.ResourceSettings{CFS: cfs}},
		{name: "v1, unset", want: containerconfig.ResourceSettings{CFS: cfs}},
		{name: "v1, true", single: ptr.To(true), want: containerconfig.ResourceSettings{CFS: cfs}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := config.SettingsOf(&kubeletconfigv1beta1.KubeletConfiguration{CPUCFSQuotaPeriod: &metav1.Duration{Duration: 100 * time.Millisecond}})
			got := resourceSettings(set, tc.single, tc.v2)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("resourceSettings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMemorySettings(t *testing.T) {
	host := machine.Info{NumCPU: 2, MemoryBytes: 8 << 30, SwapBytes: 2 << 30, SwapController: true, CgroupV2: true}
	cfg := &config.Config{Kubelet: kubeletconfigv1beta1.KubeletConfiguration{
		MemoryThrottlingFactor:  ptr.To(0.8),
		MemoryReservationPolicy: kubeletconfigv1beta1.TieredReservationMemoryReservationPolicy,
		MemorySwap:              kubeletconfigv1beta1.MemorySwapConfiguration{SwapBehavior: "LimitedSwap"},
		SystemReserved:          map[string]string{"memory": "1Gi"},
		KubeReserved:            map[string]string{"memory": "512Mi", "cpu": "100m"},
	}}
	want := cgroupmath.MemorySettings{
		CgroupV2: true, QoS: true, ThrottlingFactor: ptr.To(0.8), TieredReservation: true,
		AllocatableMemory: 8<<30 - 1<<30 - 512<<20, PageSize: 4096,
		Swap: cgroupmath.SwapSettings{ControllerAvailable: true, Behavior: "LimitedSwap", Capacity: 2 << 30, MemoryCapacity: 8 << 30},
	}
	if diff := cmp.Diff(want, memorySettings(cfg, host, 4096)); diff != "" {
		t.Errorf("memorySettings (-want +got):\n%s", diff)
	}
	cfg.Kubelet.FeatureGates = map[string]bool{"MemoryQoS": false}
	if memorySettings(cfg, host, 4096).QoS {
		t.Error("memorySettings with MemoryQoS off: QoS = true")
	}
}
