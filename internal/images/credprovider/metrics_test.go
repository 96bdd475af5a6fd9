package credprovider

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2/ktesting"
	kubeletconfigv1 "k8s.io/kubelet/config/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

// TestMetrics runs a plugin that answers and one that fails, and reads
// upstream's metrics back from the registry.
func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	provider := func(name, mode string) kubeletconfigv1.CredentialProvider {
		return kubeletconfigv1.CredentialProvider{Name: name, MatchImages: []string{"r.example.com"}, APIVersion: "credentialprovider.kubelet.k8s.io/v1",
			DefaultCacheDuration: &metav1.Duration{}, Args: []string{mode}}
	}
	// Both providers run the same binary through a symlink of their name.
	bin := t.TempDir()
	for _, name := range []string{"good", "bad"} {
		if err := symlink(filepath.Join(pluginBinDir, "plugin"), filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	ps, err := New(Config{
		Providers: &kubeletconfigv1.CredentialProviderConfig{Providers: []kubeletconfigv1.CredentialProvider{provider("good", "ok"), provider("bad", "fail")}},
		BinDir:    bin, Clock: clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)),
		Registerer: reg, ConfigHash: "sha256:abc",
	})
	if err != nil {
		t.Fatal(err)
	}
	_, ctx := ktesting.NewTestContext(t)
	ps.Provide(ctx, "r.example.com/app")
	ps.Provide(ctx, "r.example.com/app")
	got := gatherSeries(t, reg)
	want := map[string]float64{
		`kubelet_credential_provider_config_info{hash="sha256:abc"}`:            1,
		`kubelet_credential_provider_plugin_errors_total{plugin_name="bad"}`:    2,
		`kubelet_credential_provider_plugin_duration_count{plugin_name="bad"}`:  2,
		`kubelet_credential_provider_plugin_duration_count{plugin_name="good"}`: 2,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
}

// gatherSeries renders the registry's series as name{label="value"}:
// counters and gauges by value, histograms by their _count.
func gatherSeries(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			key := "{" + strings.Join(labels, ",") + "}"
			switch {
			case m.GetCounter() != nil:
				out[f.GetName()+key] = m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				out[f.GetName()+key] = m.GetGauge().GetValue()
			case m.GetHistogram() != nil:
				out[f.GetName()+"_count"+key] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out
}

// TestMetricsMatchUpstream pins the names and help of the metrics to
// upstream's pkg/credentialprovider/plugin/metrics.go.
func TestMetricsMatchUpstream(t *testing.T) {
	const pkg = "k8s.io/kubernetes/pkg/credentialprovider/plugin"
	src := upstreamsrc.New(t)
	opts := func(name string) (string, string) {
		f := src.Value(pkg, name).CompositeLits()[0].Fields()
		return "kubelet_" + f["Name"].AsString(), alpha + f["Help"].AsString()
	}
	desc := src.Value(pkg, "kubeletCredentialProviderConfigInfo")
	fq := desc.Calls("metrics", "BuildFQName")
	if len(fq) != 1 {
		t.Fatalf("upstream kubeletCredentialProviderConfigInfo has %d BuildFQName calls, want 1: update berth", len(fq))
	}
	upInfo := [2]string{"kubelet_" + fq[0].Arg(2).AsString(), alpha + desc.Calls("metrics", "NewDesc")[0].Arg(1).AsString()}
	reg := prometheus.NewRegistry()
	m, err := newMetrics(reg, "h")
	if err != nil {
		t.Fatal(err)
	}
	m.observeRun("p", time.Second, true)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range families {
		got[f.GetName()] = f.GetHelp()
	}
	for _, up := range [][2]string{
		func() [2]string { n, h := opts("kubeletCredentialProviderPluginErrors"); return [2]string{n, h} }(),
		func() [2]string { n, h := opts("kubeletCredentialProviderPluginDuration"); return [2]string{n, h} }(),
		upInfo,
	} {
		if help, ok := got[up[0]]; !ok || help != up[1] {
			t.Errorf("metric %q: berth has help %q (present %v), upstream %q", up[0], help, ok, up[1])
		}
	}
}
