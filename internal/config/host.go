package config

import (
	"context"
	"errors"

	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/platform/machine"
)

// CheckHost makes the checks of the configuration against the host that
// upstream makes at start (its OS-specific validation and the container
// manager's start checks), in its order: LimitedSwap is refused on cgroup
// v1, then failSwapOn refuses a node with swap on (without failSwapOn and
// with memorySwap unset, upstream's notice that containers get no swap is
// logged); failCgroupV1 refuses a cgroup v1 host; singleProcessOOMKill set
// to false is refused on cgroup v1, where the kernel kills single
// processes only.
func (c *Config) CheckHost(ctx context.Context, host machine.Info) error {
	kc := &c.Kubelet
	if err := machine.CheckLimitedSwap(kc.MemorySwap.SwapBehavior, host); err != nil {
		return err
	}
	failSwapOn := ptr.Deref(kc.FailSwapOn, true)
	if !failSwapOn && kc.MemorySwap.SwapBehavior == "" {
		klog.FromContext(ctx).Info("NoSwap is set due to memorySwapBehavior not specified", "memorySwapBehavior", kc.MemorySwap.SwapBehavior, "FailSwapOn", failSwapOn)
	}
	if err := machine.CheckSwap(failSwapOn, host); err != nil {
		return err
	}
	if err := machine.CheckCgroupV1(ptr.Deref(kc.FailCgroupV1, true), host); err != nil {
		return err
	}
	if !host.CgroupV2 && kc.SingleProcessOOMKill != nil && !*kc.SingleProcessOOMKill {
		return errors.New("singleProcessOOMKill must not be explicitly set to false when using cgroup v1")
	}
	return nil
}
