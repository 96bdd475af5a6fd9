package volume

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// testCert returns a self-signed certificate named cn, PEM-encoded.
func testCert(t *testing.T, cn string) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Unix(0, 0), NotAfter: time.Unix(1<<33, 0), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

func bundle(name, signer string, labels map[string]string, pems ...string) *certificatesv1.ClusterTrustBundle {
	return &certificatesv1.ClusterTrustBundle{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec:       certificatesv1.ClusterTrustBundleSpec{SignerName: signer, TrustBundle: strings.Join(pems, "\n")},
	}
}

// commonNames returns the subjects of the PEM certificates in data, in order.
func commonNames(t *testing.T, data []byte) []string {
	t.Helper()
	var out []string
	for {
		var b *pem.Block
		if b, data = pem.Decode(data); b == nil {
			return out
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c.Subject.CommonName)
	}
}

// TestClusterTrustBundleProjection: a projected clusterTrustBundle source
// shows the certificates of the bundle it names, or of every bundle of its
// signer whose labels its selector matches, each once; a missing bundle or
// no match fails the volume unless the source is optional (an empty file);
// no name nor signer, and a selector left out, as upstream.
func TestClusterTrustBundleProjection(t *testing.T) {
	a, b, c := testCert(t, "a"), testCert(t, "b"), testCert(t, "c")
	objects := []runtime.Object{
		bundle("one", "", nil, a),
		bundle("example.com:ca:1", "example.com/ca", map[string]string{"tier": "gold"}, a, b),
		bundle("example.com:ca:2", "example.com/ca", map[string]string{"tier": "gold"}, b, c),
		bundle("example.com:ca:3", "example.com/ca", map[string]string{"tier": "iron"}, testCert(t, "iron")),
		bundle("other.com:ca:1", "other.com/ca", map[string]string{"tier": "gold"}, testCert(t, "other")),
	}
	gold := &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "gold"}}
	for _, tc := range []struct {
		name    string
		src     corev1.ClusterTrustBundleProjection
		want    []string // common names, when it succeeds
		wantErr string
	}{
		{"by name", corev1.ClusterTrustBundleProjection{Name: ptr.To("one")}, []string{"a"}, ""},
		{"missing name", corev1.ClusterTrustBundleProjection{Name: ptr.To("none")}, nil, "while getting ClusterTrustBundle:"},
		{"missing name, optional", corev1.ClusterTrustBundleProjection{Name: ptr.To("none"), Optional: ptr.To(true)}, []string{}, ""},
		{"by signer and labels", corev1.ClusterTrustBundleProjection{SignerName: ptr.To("example.com/ca"), LabelSelector: gold}, []string{"a", "b", "c"}, ""},
		{"every bundle of the signer", corev1.ClusterTrustBundleProjection{SignerName: ptr.To("example.com/ca"), LabelSelector: &metav1.LabelSelector{}}, []string{"a", "b", "c", "iron"}, ""},
		{"no selector matches nothing", corev1.ClusterTrustBundleProjection{SignerName: ptr.To("example.com/ca")}, nil,
			"combination of signerName and labelSelector matched zero ClusterTrustBundles"},
		{"no match, optional", corev1.ClusterTrustBundleProjection{SignerName: ptr.To("nobody.com/ca"), LabelSelector: gold, Optional: ptr.To(true)}, []string{}, ""},
		{"neither", corev1.ClusterTrustBundleProjection{}, nil, "ClusterTrustBundle projection requires either name or signerName to be set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, objects...)
			e.m.cfg.Retry.Attempts = 1
			src := tc.src
			src.Path = "ca.crt"
			pod := testPod()
			pod.Spec.Volumes = []corev1.Volume{{Name: "trust", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				DefaultMode: ptr.To[int32](0o644), Sources: []corev1.VolumeProjection{{ClusterTrustBundle: &src}},
			}}}}
			paths, err := e.m.SetUp(context.Background(), pod)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("SetUp() error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(filepath.Join(paths["trust"], "ca.crt"))
			if err != nil {
				t.Fatal(err)
			}
			got := commonNames(t, data)
			if got == nil {
				got = []string{}
			}
			sortedWant := append([]string(nil), tc.want...)
			if len(got) != len(sortedWant) {
				t.Fatalf("certificates %v, want %v", got, tc.want)
			}
			seen := map[string]bool{}
			for _, cn := range got {
				seen[cn] = true
			}
			for _, cn := range tc.want {
				if !seen[cn] {
					t.Errorf("certificates %v, want %v", got, tc.want)
				}
			}
		})
	}
}

// TestClusterTrustBundleStandalone: without an API server the projection
// fails with upstream's words.
func TestClusterTrustBundleStandalone(t *testing.T) {
	e := newEnv(t)
	e.m.cfg.Client = nil
	pod := testPod()
	pod.Spec.Volumes = []corev1.Volume{{Name: "trust", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		DefaultMode: ptr.To[int32](0o644), Sources: []corev1.VolumeProjection{{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{Name: ptr.To("one"), Path: "ca.crt"}}},
	}}}}
	_, err := e.m.SetUp(context.Background(), pod)
	if err == nil || !strings.Contains(err.Error(), "ClusterTrustBundle projection is not supported in static kubelet mode") {
		t.Errorf("SetUp() error = %v", err)
	}
}
