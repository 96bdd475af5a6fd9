package config

import (
	"testing"

	"k8s.io/klog/v2/ktesting"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/platform/machine"
)

func TestCheckHost(t *testing.T) {
	for _, tc := range []struct {
		name       string
		failSwapOn *bool
		behavior   string
		single     *bool
		host       machine.Info
		wantErr    string
	}{
		{name: "no swap", host: machine.Info{CgroupV2: true}},
		{name: "swap on, failSwapOn default", host: machine.Info{SwapOn: true, CgroupV2: true}, wantErr: "running with swap on is not supported, please disable swap or set --fail-swap-on flag to false"},
		{name: "swap on, failSwapOn false, NoSwap", failSwapOn: ptr.To(false), behavior: "NoSwap", host: machine.Info{SwapOn: true, CgroupV2: true}},
		{name: "swap on, failSwapOn false, unset", failSwapOn: ptr.To(false), host: machine.Info{SwapOn: true, CgroupV2: true}},
		{name: "LimitedSwap on v1", failSwapOn: ptr.To(false), behavior: "LimitedSwap", host: machine.Info{SwapOn: true}, wantErr: "swap feature is enabled and LimitedSwap but it is only supported with cgroupv2"},
		{name: "LimitedSwap on v2", failSwapOn: ptr.To(false), behavior: "LimitedSwap", host: machine.Info{SwapOn: true, CgroupV2: true}},
		{name: "v2, singleProcessOOMKill false", single: ptr.To(false), host: machine.Info{CgroupV2: true}},
		{name: "v1, singleProcessOOMKill true", single: ptr.To(true)},
		{name: "v1, singleProcessOOMKill false: refused", single: ptr.To(false), wantErr: "singleProcessOOMKill must not be explicitly set to false when using cgroup v1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			c := &Config{Kubelet: kubeletconfigv1beta1.KubeletConfiguration{
				FailSwapOn: tc.failSwapOn, FailCgroupV1: ptr.To(false), SingleProcessOOMKill: tc.single,
				MemorySwap: kubeletconfigv1beta1.MemorySwapConfiguration{SwapBehavior: tc.behavior},
			}}
			var got string
			if err := c.CheckHost(ctx, tc.host); err != nil {
				got = err.Error()
			}
			if got != tc.wantErr {
				t.Errorf("CheckHost = %q, want %q", got, tc.wantErr)
			}
		})
	}
}
