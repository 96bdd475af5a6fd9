package agent

import (
	"context"

	ndf "k8s.io/component-helpers/nodedeclaredfeatures"
	"k8s.io/component-helpers/nodedeclaredfeatures/features"
	"k8s.io/klog/v2"

	"github.com/berthk8s/berth/internal/config"
	"github.com/berthk8s/berth/internal/platform/cri"
	"github.com/berthk8s/berth/internal/pod/declaredfeatures"
)

// declareFeatures discovers the node's declared features once at start,
// as upstream's kubelet does when it is built: the library's registry over
// berth's resolved gates, its version and the features the runtime
// reported when berth connected.
func declareFeatures(ctx context.Context, cfg *config.Config, runtime cri.Info) (*declaredfeatures.Declared, error) {
	gates, err := cfg.FeatureGates(klog.FromContext(ctx))
	if err != nil {
		return nil, err
	}
	d, err := declaredfeatures.New(declaredfeatures.Config{
		Registry: features.AllFeatures,
		Gates:    declaredfeatures.Gates(gates),
		Version:  config.KubernetesVersion,
		Runtime: ndf.RuntimeFeatures{
			UserNamespacesHostNetwork: runtime.Features.UserNamespacesHostNetwork,
			MountOptions:              runtime.Features.MountOptions,
		},
	})
	if err != nil {
		return nil, err
	}
	klog.FromContext(ctx).Info("Node declared features", "features", d.Names())
	return d, nil
}
