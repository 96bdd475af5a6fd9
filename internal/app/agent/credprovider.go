package agent

import (
	"context"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/config"
	"github.com/berthk8s/berth/internal/images/credprovider"
	"github.com/berthk8s/berth/internal/pod/kuberuntime"
)

// credentialProviders builds the image credential provider plugins that
// config.Load has loaded and validated (--image-credential-provider-config
// and -bin-dir), with upstream's metrics in reg; nil when there are none,
// so that pulls use pull secrets only.
func credentialProviders(ctx context.Context, cfg *config.Config, clk clock.PassiveClock, reg prometheus.Registerer) (kuberuntime.CredentialProvider, error) {
	if cfg.CredentialProviders == nil {
		return nil, nil
	}
	ps, err := credprovider.New(credprovider.Config{Providers: cfg.CredentialProviders, BinDir: cfg.ImageCredentialProviderBinDir, Clock: clk,
		Registerer: reg, ConfigHash: cfg.CredentialProvidersHash})
	if err != nil {
		return nil, fmt.Errorf("create image credential providers: %w", err)
	}
	names := make([]string, 0, len(cfg.CredentialProviders.Providers))
	for _, p := range cfg.CredentialProviders.Providers {
		names = append(names, p.Name)
	}
	klog.FromContext(ctx).Info("Registered image credential provider plugins", "providers", names, "binDir", cfg.ImageCredentialProviderBinDir)
	return ps, nil
}
