package agent

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2/ktesting"
	kubeletconfigv1 "k8s.io/kubelet/config/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/berthk8s/berth/internal/config"
)

// TestCredentialProviders: without plugins the runtime manager gets a nil
// interface (not a typed nil), which it reads as "pull secrets only"; with
// them, Providers.
func TestCredentialProviders(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	clk := testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	got, err := credentialProviders(ctx, &config.Config{}, clk, prometheus.NewRegistry())
	if err != nil || got != nil {
		t.Errorf("without plugins: %v, %v; want nil, nil", got, err)
	}
	cfg := &config.Config{ImageCredentialProviderBinDir: t.TempDir(), CredentialProviders: &kubeletconfigv1.CredentialProviderConfig{
		Providers: []kubeletconfigv1.CredentialProvider{{Name: "p", MatchImages: []string{"r.io"}, APIVersion: "credentialprovider.kubelet.k8s.io/v1",
			DefaultCacheDuration: &metav1.Duration{}}}}}
	reg := prometheus.NewRegistry()
	got, err = credentialProviders(ctx, cfg, clk, reg)
	if err != nil || got == nil {
		t.Errorf("with a plugin: %v, %v; want providers", got, err)
	}
	if families, err := reg.Gather(); err != nil || len(families) == 0 {
		t.Errorf("with a plugin: metrics %v, %v; want kubelet_credential_provider_config_info", families, err)
	}
}
