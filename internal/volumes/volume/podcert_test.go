package volume

import (
	"context"
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/volumes/podcert"
	"github.com/berthk8s/berth/internal/volumes/podcert/podcertfake"
	"github.com/berthk8s/berth/internal/volumes/transient"
)

// certEnv is a volume manager with the pod certificate manager and a test
// signer over the fake clientset.
func certEnv(t *testing.T) (env, *podcertfake.Signer) {
	t.Helper()
	e := newEnv(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "sa", UID: "sa-uid"}})
	signer, err := podcertfake.New(e.clock)
	if err != nil {
		t.Fatal(err)
	}
	signer.Attach(e.client)
	certs, err := podcert.New(podcert.Config{Client: e.client, NodeName: "node", NodeUID: func() types.UID { return "node-uid" },
		Clock: e.clock, Recorder: e.events, Jitter: func() time.Duration { return 0 }})
	if err != nil {
		t.Fatal(err)
	}
	e.m.cfg.PodCertificates = certs
	// One attempt per SetUp: the fake clock does not move on its own.
	e.m.cfg.Retry = transient.Policy{Attempts: 1}
	return e, signer
}

// certVolumePod mounts a projected volume with a podCertificate source
// writing all three files beside a downward API file.
func certVolumePod() *corev1.Pod {
	pod := testPod()
	pod.Spec.Volumes = []corev1.Volume{{Name: "creds", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		DefaultMode: ptr.To[int32](0o644),
		Sources: []corev1.VolumeProjection{
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "name", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}},
			{PodCertificate: &corev1.PodCertificateProjection{SignerName: "example.com/test", KeyType: "ECDSAP256",
				CredentialBundlePath: "bundle.pem", KeyPath: "tls/key.pem", CertificateChainPath: "tls/chain.pem"}},
		},
	}}}}
	return pod
}

// readCreds reads the three files of the volume and checks that the
// bundle is the key then the chain, that the chain verifies against the
// signer's CA and is issued to the key; it returns the key and the modes.
func readCreds(t *testing.T, dir string, signer *podcertfake.Signer, now time.Time) (string, map[string]os.FileMode) {
	t.Helper()
	files, modes := map[string]string{}, map[string]os.FileMode{}
	for _, name := range []string{"bundle.pem", "tls/key.pem", "tls/chain.pem"} {
		path := filepath.Join(dir, name)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		files[name], modes[name] = string(data), info.Mode().Perm()
	}
	if files["bundle.pem"] != files["tls/key.pem"]+files["tls/chain.pem"] {
		t.Errorf("bundle.pem is not key.pem then chain.pem:\n%s", files["bundle.pem"])
	}
	cb, _ := pem.Decode([]byte(files["tls/chain.pem"]))
	kb, _ := pem.Decode([]byte(files["tls/key.pem"]))
	if cb == nil || kb == nil || cb.Type != "CERTIFICATE" || kb.Type != "PRIVATE KEY" {
		t.Fatalf("chain or key not PEM: %q %q", files["tls/chain.pem"], files["tls/key.pem"])
	}
	leaf, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: signer.Pool(), CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
		t.Errorf("the chain does not verify against the signer's CA: %v", err)
	}
	key, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if !key.(crypto.Signer).Public().(interface{ Equal(crypto.PublicKey) bool }).Equal(leaf.PublicKey) {
		t.Error("the certificate is not issued to the key")
	}
	return files["tls/key.pem"], modes
}

// TestPodCertificateVolume: the volume is not ready (FailedMount in
// upstream's words) until the signer issues the certificate; then its
// files hold the key, the chain and both, with the volume's mode, or 0600
// with an fsGroup, and the atomic writer's ..data beside them.
func TestPodCertificateVolume(t *testing.T) {
	for _, tc := range []struct {
		name     string
		fsGroup  *int64
		wantMode os.FileMode
	}{
		{"defaultMode", nil, 0o644},
		{"fsGroup", ptr.To(int64(os.Getgid())), 0o640}, // 0600, then the group gets read from the ownership walk
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, signer := certEnv(t)
			signer.Mode = podcertfake.Pending
			pod := certVolumePod()
			if tc.fsGroup != nil {
				pod.Spec.SecurityContext = &corev1.PodSecurityContext{FSGroup: tc.fsGroup}
			}
			ctx := context.Background()
			for range 2 {
				if _, err := e.m.SetUp(ctx, pod); err == nil || !strings.Contains(err.Error(), `volume "creds": credential bundle is not issued yet`) {
					t.Fatalf("SetUp() before the certificate = %v", err)
				}
			}
			if want := `Warning FailedMount MountVolume.SetUp failed for volume "creds" : credential bundle is not issued yet`; !contains(e.events.messages, want) {
				t.Errorf("events %q, want %q", e.events.messages, want)
			}
			if n := len(signer.Requests()); n != 1 {
				t.Fatalf("%d requests, want 1", n)
			}
			signer.Mode = podcertfake.Issue
			if err := signer.Decide(ctx, e.client, "ns", "req-1"); err != nil {
				t.Fatal(err)
			}
			paths, err := e.m.SetUp(ctx, pod)
			if err != nil {
				t.Fatalf("SetUp() after the certificate = %v", err)
			}
			_, modes := readCreds(t, paths["creds"], signer, e.clock.Now())
			for name, mode := range modes {
				if mode != tc.wantMode {
					t.Errorf("%s mode %v, want %v", name, mode, tc.wantMode)
				}
			}
			if name, err := os.ReadFile(filepath.Join(paths["creds"], "name")); err != nil || string(name) != "web" {
				t.Errorf("the downward API file beside it: %q, %v", name, err)
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestPodCertificateRefresh: the refresh rounds request a new certificate
// once beginRefreshAt passed and replace the files atomically once it is
// issued, before the old one expires.
func TestPodCertificateRefresh(t *testing.T) {
	e, signer := certEnv(t)
	signer.Lifetime, signer.RefreshAfter = time.Hour, 30*time.Minute
	pod := certVolumePod()
	ctx := context.Background()
	if _, err := e.m.SetUp(ctx, pod); err == nil {
		t.Fatal("SetUp() succeeded before the request was seen issued")
	}
	paths, err := e.m.SetUp(ctx, pod)
	if err != nil {
		t.Fatal(err)
	}
	dir := paths["creds"]
	key1, _ := readCreds(t, dir, signer, e.clock.Now())
	data1, _ := os.Readlink(filepath.Join(dir, "..data"))

	e.clock.Step(29 * time.Minute)
	e.m.refresh(ctx, false)
	if key, _ := readCreds(t, dir, signer, e.clock.Now()); key != key1 || len(signer.Requests()) != 1 {
		t.Fatalf("refreshed before beginRefreshAt (%d requests)", len(signer.Requests()))
	}
	e.clock.Step(time.Minute)
	e.m.refresh(ctx, false) // makes the refresh request, keeps the certificate
	e.m.refresh(ctx, false) // sees it issued, writes it
	key2, _ := readCreds(t, dir, signer, e.clock.Now())
	if key2 == key1 || len(signer.Requests()) != 2 {
		t.Fatalf("not refreshed at beginRefreshAt: %d requests", len(signer.Requests()))
	}
	if data2, _ := os.Readlink(filepath.Join(dir, "..data")); data2 == data1 {
		t.Errorf("..data still points at %s: the files were not replaced by a new version", data1)
	}
}

// TestPodCertificateDenied: a denied request is final: the Denied event
// and a FailedMount with the signer's reason, and the pod waits.
func TestPodCertificateDenied(t *testing.T) {
	e, signer := certEnv(t)
	signer.Mode, signer.Reason, signer.Message = podcertfake.Deny, "UnsupportedKeyType", "use ED25519"
	pod := certVolumePod()
	ctx := context.Background()
	for range 3 {
		if _, err := e.m.SetUp(ctx, pod); err == nil {
			t.Fatal("SetUp() succeeded with a denied request")
		}
	}
	for _, want := range []string{
		`Warning Denied PodCertificateRequest ns/req-1 was denied, reason="UnsupportedKeyType", message="use ED25519"`,
		`Warning FailedMount MountVolume.SetUp failed for volume "creds" : PodCertificateRequest was permanently denied: reason="UnsupportedKeyType" message="use ED25519"`,
	} {
		if !contains(e.events.messages, want) {
			t.Errorf("events %q, want %q", e.events.messages, want)
		}
	}
	if n := len(signer.Requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

// TestPodCertificateStandalone: without an API server the source fails
// with a clear error, and a bad projection is refused before any request.
func TestPodCertificateStandalone(t *testing.T) {
	e := newEnv(t)
	e.m.cfg.Retry = transient.Policy{Attempts: 1}
	_, err := e.m.SetUp(context.Background(), certVolumePod())
	if want := `volume "creds": podCertificate source 1 needs an API server (berth runs standalone)`; err == nil || err.Error() != want {
		t.Errorf("SetUp() = %v, want %q", err, want)
	}
	e, signer := certEnv(t)
	pod := certVolumePod()
	pod.Spec.Volumes[0].Projected.Sources[1].PodCertificate.KeyType = "RSA1024"
	_, err = e.m.SetUp(context.Background(), pod)
	if err == nil || !strings.Contains(err.Error(), `invalid podCertificate projection: keyType: unsupported value "RSA1024"`) || len(signer.Requests()) != 0 {
		t.Errorf("SetUp() of a bad projection = %v, %d requests", err, len(signer.Requests()))
	}
}
