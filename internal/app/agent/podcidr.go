package agent

import (
	"context"
	"strings"

	"k8s.io/klog/v2"

	"github.com/berthk8s/berth/internal/cluster/podcidr"
)

// startPodCIDR hands the runtime the podCIDR setting (--pod-cidr) at start,
// as upstream's kubelet does in either mode, and returns what the node
// status loop calls with the Node's spec.podCIDRs in cluster mode. A
// failed update is logged and retried with the next value, as upstream.
func startPodCIDR(ctx context.Context, runtime podcidr.RuntimeConfigUpdater, cidr string) func(context.Context, []string) {
	u := podcidr.New(runtime)
	if _, err := u.Update(ctx, cidr); err != nil {
		klog.FromContext(ctx).Error(err, "Pod CIDR update failed")
	}
	return func(ctx context.Context, cidrs []string) {
		if _, err := u.Update(ctx, strings.Join(cidrs, ",")); err != nil {
			klog.FromContext(ctx).Error(err, "Error updating pod CIDR")
		}
	}
}
