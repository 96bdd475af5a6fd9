package metrics

import (
	"crypto/tls"
	"crypto/x509"
	"go/ast"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

func TestCertificateMetrics(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	m, err := New(Config{NodeName: "node-a", Clock: clocktesting.NewFakeClock(now)})
	if err != nil {
		t.Fatal(err)
	}
	var client *tls.Certificate
	serving := &tls.Certificate{Leaf: &x509.Certificate{NotAfter: now.Add(90*time.Second + 400*time.Millisecond)}}
	cobs, err := m.CertificateObservers(ClientCertificate)
	if err != nil {
		t.Fatal(err)
	}
	sobs, err := m.CertificateObservers(ServingCertificate)
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(m.CertificateTTL(ClientCertificate, func() *tls.Certificate { return client }))
	must(m.CertificateTTL(ServingCertificate, func() *tls.Certificate { return serving }))
	if cobs.Rotated != nil {
		t.Error("the client certificate has no rotation histogram upstream")
	}
	cobs.RenewError()
	sobs.RenewError()
	sobs.RenewError()
	sobs.Rotated(7200)
	got := render(t, m.Registry(), "kubelet_certificate_manager_client_ttl_seconds", "kubelet_certificate_manager_client_expiration_renew_errors",
		"kubelet_certificate_manager_server_ttl_seconds", "kubelet_server_expiration_renew_errors")
	for _, want := range []string{
		"kubelet_certificate_manager_client_ttl_seconds +Inf",
		"kubelet_certificate_manager_client_expiration_renew_errors 1",
		"kubelet_certificate_manager_server_ttl_seconds 90",
		"kubelet_server_expiration_renew_errors 2",
	} {
		if !strings.Contains(got, want+"\n") {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	client = &tls.Certificate{Leaf: &x509.Certificate{NotAfter: now.Add(-30 * time.Second)}}
	if got := render(t, m.Registry(), "kubelet_certificate_manager_client_ttl_seconds"); !strings.Contains(got, "kubelet_certificate_manager_client_ttl_seconds -30\n") {
		t.Errorf("expired certificate: %s", got)
	}
	if got := render(t, m.Registry(), "kubelet_certificate_manager_server_rotation_seconds"); !strings.Contains(got, `kubelet_certificate_manager_server_rotation_seconds_bucket{le="14400"} 1`) {
		t.Errorf("rotation histogram: %s", got)
	}
	if _, err := m.CertificateObservers(ClientCertificate); err == nil {
		t.Error("registering the client certificate counters twice: no error")
	}
}

// TestCertificateMetricsMatchUpstream pins the names and the rotation
// buckets to upstream's NewKubeletServerCertificateManager,
// NewKubeletClientCertificateManager and the kubelet's client TTL gauge.
func TestCertificateMetricsMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	var names []string
	var buckets []float64
	for _, fn := range []struct{ pkg, name string }{
		{"k8s.io/kubernetes/pkg/kubelet/certificate", "NewKubeletServerCertificateManager"},
		{"k8s.io/kubernetes/pkg/kubelet/certificate", "NewKubeletClientCertificateManager"},
		{"k8s.io/kubernetes/cmd/kubelet/app", "buildKubeletClientConfig"},
	} {
		for _, lit := range src.Func(fn.pkg, fn.name).CompositeLits() {
			fields := keys(lit.Node.(*ast.CompositeLit))
			if !fields["Name"] || !fields["Help"] {
				continue
			}
			f := lit.Fields()
			name := "kubelet_" + f["Name"].AsString()
			if fields["Namespace"] {
				name = "kubelet_" + f["Subsystem"].AsString() + "_" + f["Name"].AsString()
			}
			names = append(names, name)
			if b, ok := f["Buckets"]; ok {
				buckets = b.AsFloats()
			}
		}
	}
	want := []string{
		"kubelet_server_expiration_renew_errors", "kubelet_certificate_manager_server_rotation_seconds",
		"kubelet_certificate_manager_server_ttl_seconds", "kubelet_certificate_manager_client_expiration_renew_errors",
		"kubelet_certificate_manager_client_ttl_seconds",
	}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("upstream's certificate metrics (-berth +upstream):\n%s", diff)
	}
	if diff := cmp.Diff(serverRotationBuckets, buckets); diff != "" {
		t.Errorf("rotation buckets (-berth +upstream):\n%s", diff)
	}
}

// keys returns the field names of a keyed struct literal, nil for any
// other literal.
func keys(cl *ast.CompositeLit) map[string]bool {
	out := map[string]bool{}
	for _, e := range cl.Elts {
		kv, ok := e.(*ast.KeyValueExpr)
		if !ok {
			return nil
		}
		if id, ok := kv.Key.(*ast.Ident); ok {
			out[id.Name] = true
		}
	}
	return out
}
