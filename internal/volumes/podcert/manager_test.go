package podcert_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/volumes/podcert"
	"github.com/berthk8s/berth/internal/volumes/podcert/podcertfake"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

type recorder struct {
	mu     sync.Mutex // guards events
	events []string
}

func (r *recorder) Eventf(_ *corev1.Pod, eventType, reason, messageFmt string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, eventType+" "+reason+" "+fmt.Sprintf(messageFmt, args...))
}

func (r *recorder) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...)
}

type env struct {
	m      *podcert.Manager
	client *fake.Clientset
	clock  *clocktesting.FakeClock
	signer *podcertfake.Signer
	events *recorder
}

func newEnv(t *testing.T) env {
	t.Helper()
	e := env{clock: clocktesting.NewFakeClock(t0), events: &recorder{}}
	e.client = fake.NewClientset(&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "sa", UID: "sa-uid"}})
	var err error
	if e.signer, err = podcertfake.New(e.clock); err != nil {
		t.Fatal(err)
	}
	e.signer.Attach(e.client)
	e.m, err = podcert.New(podcert.Config{
		Client: e.client, NodeName: "node", NodeUID: func() types.UID { return "node-uid" }, Clock: e.clock,
		Recorder: e.events, Jitter: func() time.Duration { return 0 },
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func certPod(src corev1.PodCertificateProjection) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "pod-uid"},
		Spec: corev1.PodSpec{ServiceAccountName: "sa", NodeName: "node", Volumes: []corev1.Volume{{
			Name: "creds", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}},
				{PodCertificate: &src},
			}}},
		}}},
	}
}

func projectionOf(keyType string) corev1.PodCertificateProjection {
	return corev1.PodCertificateProjection{
		SignerName: "example.com/test", KeyType: keyType, MaxExpirationSeconds: ptr.To[int32](7200),
		UserAnnotations: map[string]string{"example.com/spiffe": "yes"}, CredentialBundlePath: "bundle.pem",
	}
}

// issue calls Bundle until the certificate comes: the first call makes
// the request, the second sees it issued.
func (e env) issue(t *testing.T, pod *corev1.Pod) (key, chain []byte) {
	t.Helper()
	if _, _, err := e.m.Bundle(context.Background(), pod, "creds", 1); !errors.Is(err, podcert.ErrNotIssued) {
		t.Fatalf("first Bundle() error = %v, want %v", err, podcert.ErrNotIssued)
	}
	key, chain, err := e.m.Bundle(context.Background(), pod, "creds", 1)
	if err != nil {
		t.Fatalf("Bundle() = %v", err)
	}
	return key, chain
}

// verify checks that chain's leaf verifies against the signer's CA and
// is issued to the public key of keyPEM, and returns the leaf.
func (e env) verify(t *testing.T, keyPEM, chain []byte) *x509.Certificate {
	t.Helper()
	b, _ := pem.Decode(chain)
	if b == nil || b.Type != "CERTIFICATE" {
		t.Fatalf("chain %q has no CERTIFICATE block", chain)
	}
	leaf, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: e.signer.Pool(), CurrentTime: e.clock.Now(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
		t.Errorf("leaf does not verify against the signer's CA: %v", err)
	}
	kb, _ := pem.Decode(keyPEM)
	if kb == nil || kb.Type != "PRIVATE KEY" {
		t.Fatalf("key %q is not a PRIVATE KEY block", keyPEM)
	}
	key, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	pub := key.(crypto.Signer).Public().(interface{ Equal(crypto.PublicKey) bool })
	if !pub.Equal(leaf.PublicKey) {
		t.Error("the certificate is not issued to the key")
	}
	return leaf
}

// TestIssued: a request as upstream's kubelet makes it, the key of the
// projection's type, and the issued chain for it.
func TestIssued(t *testing.T) {
	for _, kt := range podcert.KeyTypes() {
		t.Run(kt, func(t *testing.T) {
			if testing.Short() && kt == "RSA4096" {
				t.Skip("slow key")
			}
			e := newEnv(t)
			pod := certPod(projectionOf(kt))
			key, chain := e.issue(t, pod)
			e.verify(t, key, chain)
			reqs := e.signer.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(reqs))
			}
			got := reqs[0]
			csr, err := x509.ParseCertificateRequest(got.Spec.StubPKCS10Request)
			if err != nil || csr.CheckSignature() != nil {
				t.Fatalf("stub CSR: %v", err)
			}
			if want := map[string]string{
				"RSA3072": "RSA", "RSA4096": "RSA", "ECDSAP256": "ECDSA", "ECDSAP384": "ECDSA", "ECDSAP521": "ECDSA", "ED25519": "Ed25519",
			}[kt]; csr.PublicKeyAlgorithm.String() != want {
				t.Errorf("key algorithm %v, want %s", csr.PublicKeyAlgorithm, want)
			}
			got.Spec.StubPKCS10Request = nil
			want := &certificatesv1.PodCertificateRequest{
				ObjectMeta: metav1.ObjectMeta{Namespace: "ns", GenerateName: "req-",
					OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "web", UID: "pod-uid"}}},
				Spec: certificatesv1.PodCertificateRequestSpec{
					SignerName: "example.com/test", PodName: "web", PodUID: "pod-uid", ServiceAccountName: "sa", ServiceAccountUID: "sa-uid",
					NodeName: "node", NodeUID: "node-uid", MaxExpirationSeconds: ptr.To[int32](7200),
					UnverifiedUserAnnotations: map[string]string{"example.com/spiffe": "yes"},
				},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
			if evs := e.events.list(); len(evs) != 0 {
				t.Errorf("events %q", evs)
			}
		})
	}
}

// TestRefresh: nothing is requested before beginRefreshAt plus the
// jitter; after it a new key is requested while the pod keeps the current
// certificate, and once the signer issues it the new one replaces it.
func TestRefresh(t *testing.T) {
	e := newEnv(t)
	jitter := 90 * time.Second
	var err error
	e.m, err = podcert.New(podcert.Config{Client: e.client, NodeName: "node", NodeUID: func() types.UID { return "node-uid" },
		Clock: e.clock, Recorder: e.events, Jitter: func() time.Duration { return jitter }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	pod := certPod(projectionOf("ECDSAP256"))
	e.signer.RefreshAfter, e.signer.Lifetime = 30*time.Minute, time.Hour
	key1, chain1 := e.issue(t, pod)
	same := func(key, chain []byte) bool { return bytes.Equal(key, key1) && bytes.Equal(chain, chain1) }

	e.clock.Step(30*time.Minute + jitter - time.Second) // just before beginRefreshAt + jitter
	if key, chain, err := e.m.Bundle(ctx, pod, "creds", 1); err != nil || !same(key, chain) || len(e.signer.Requests()) != 1 {
		t.Fatalf("before the refresh time: same %v, %d requests, %v", same(key, chain), len(e.signer.Requests()), err)
	}

	e.clock.Step(time.Second)
	e.signer.Mode = podcertfake.Pending
	if key, chain, err := e.m.Bundle(ctx, pod, "creds", 1); err != nil || !same(key, chain) {
		t.Fatalf("while the refresh waits: same %v, %v", same(key, chain), err)
	}
	reqs := e.signer.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests at the refresh time, want 2", len(reqs))
	}
	if key, chain, err := e.m.Bundle(ctx, pod, "creds", 1); err != nil || !same(key, chain) || len(e.signer.Requests()) != 2 {
		t.Fatalf("refresh pending: same %v, %d requests, %v", same(key, chain), len(e.signer.Requests()), err)
	}

	e.signer.Mode = podcertfake.Issue
	if err := e.signer.Decide(ctx, e.client, "ns", "req-2"); err != nil {
		t.Fatal(err)
	}
	key2, chain2, err := e.m.Bundle(ctx, pod, "creds", 1)
	if err != nil || same(key2, chain2) || bytes.Equal(key2, key1) {
		t.Fatalf("after the refresh was issued: same %v, %v", same(key2, chain2), err)
	}
	leaf := e.verify(t, key2, chain2)
	if !leaf.NotBefore.Equal(e.clock.Now().Truncate(time.Second)) {
		t.Errorf("new leaf from %v, want now", leaf.NotBefore)
	}
	if evs := e.events.list(); len(evs) != 0 {
		t.Errorf("events %q", evs)
	}
}

// TestLateRefresh: a refresh still unanswered 10 minutes after
// beginRefreshAt, then past notAfter, is warned about once each, in
// upstream's words; the pod keeps the certificate it has.
func TestLateRefresh(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	pod := certPod(projectionOf("ED25519"))
	e.signer.RefreshAfter, e.signer.Lifetime = 30*time.Minute, time.Hour
	key1, _ := e.issue(t, pod)
	e.signer.Mode = podcertfake.Pending
	for _, step := range []time.Duration{30 * time.Minute, 11 * time.Minute, time.Minute, 20 * time.Minute, time.Minute} {
		e.clock.Step(step)
		if key, _, err := e.m.Bundle(ctx, pod, "creds", 1); err != nil || !bytes.Equal(key, key1) {
			t.Fatalf("Bundle() = %v", err)
		}
	}
	want := []string{"Warning CertificateOverdueForRefresh PodCertificate refresh overdue", "Warning CertificateExpired PodCertificate expired"}
	if diff := cmp.Diff(want, e.events.list()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if n := len(e.signer.Requests()); n != 2 {
		t.Errorf("%d requests, want 2 (one refresh, still waited for)", n)
	}
}

// TestDeniedAndFailed: a denied or failed request is final: a warning
// event in upstream's words, Bundle fails with the signer's reason, and
// no new request is made.
func TestDeniedAndFailed(t *testing.T) {
	for _, tc := range []struct {
		mode      podcertfake.Answer
		wantEvent string
		wantErr   string
	}{
		{podcertfake.Deny, `Warning Denied PodCertificateRequest ns/req-1 was denied, reason="UnsupportedKeyType", message="use ED25519"`,
			`PodCertificateRequest was permanently denied: reason="UnsupportedKeyType" message="use ED25519"`},
		{podcertfake.Fail, `Warning Failed PodCertificateRequest ns/req-1 failed, reason="UnsupportedKeyType", message="use ED25519"`,
			`PodCertificateRequest was permanently failed: reason="UnsupportedKeyType" message="use ED25519"`},
	} {
		t.Run(tc.wantErr, func(t *testing.T) {
			e := newEnv(t)
			e.signer.Mode, e.signer.Reason, e.signer.Message = tc.mode, "UnsupportedKeyType", "use ED25519"
			pod := certPod(projectionOf("ECDSAP384"))
			ctx := context.Background()
			if _, _, err := e.m.Bundle(ctx, pod, "creds", 1); !errors.Is(err, podcert.ErrNotIssued) {
				t.Fatalf("first Bundle() = %v", err)
			}
			for range 3 {
				e.clock.Step(time.Hour)
				if _, _, err := e.m.Bundle(ctx, pod, "creds", 1); err == nil || err.Error() != tc.wantErr {
					t.Fatalf("Bundle() = %v, want %q", err, tc.wantErr)
				}
			}
			if diff := cmp.Diff([]string{tc.wantEvent}, e.events.list()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if n := len(e.signer.Requests()); n != 1 {
				t.Errorf("%d requests, want 1", n)
			}
		})
	}
}

// TestPendingAndDeleted: while the signer does not answer, Bundle says
// the credential is not issued; a request the API no longer shows is
// made again only once upstream's 10 minutes passed.
func TestPendingAndDeleted(t *testing.T) {
	e := newEnv(t)
	e.signer.Mode = podcertfake.Pending
	ctx := context.Background()
	pod := certPod(projectionOf("ECDSAP256"))
	for range 3 {
		if _, _, err := e.m.Bundle(ctx, pod, "creds", 1); err == nil || err.Error() != "credential bundle is not issued yet" {
			t.Fatalf("Bundle() = %v", err)
		}
	}
	if err := e.client.CertificatesV1().PodCertificateRequests("ns").Delete(ctx, "req-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.clock.Step(9 * time.Minute)
	if _, _, err := e.m.Bundle(ctx, pod, "creds", 1); !errors.Is(err, podcert.ErrNotIssued) || len(e.signer.Requests()) != 1 {
		t.Fatalf("within 10 minutes: %v, %d requests", err, len(e.signer.Requests()))
	}
	e.clock.Step(2 * time.Minute)
	e.signer.Mode = podcertfake.Issue
	if _, _, err := e.m.Bundle(ctx, pod, "creds", 1); !errors.Is(err, podcert.ErrNotIssued) || len(e.signer.Requests()) != 2 {
		t.Fatalf("after 10 minutes: %v, %d requests, want a new one", err, len(e.signer.Requests()))
	}
	key, chain, err := e.m.Bundle(ctx, pod, "creds", 1)
	if err != nil {
		t.Fatal(err)
	}
	e.verify(t, key, chain)
}

// TestRequestFailures: a failed first request fails Bundle with upstream's
// words (and is made again at the next call); a failed refresh keeps the
// current certificate.
func TestRequestFailures(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	pod := certPod(projectionOf("ECDSAP256"))
	fail := true
	e.client.PrependReactor("create", "podcertificaterequests", func(k8stesting.Action) (bool, runtime.Object, error) {
		if fail {
			return true, nil, errors.New("no room")
		}
		return false, nil, nil
	})
	want := "while creating initial PodCertificateRequest: while creating on API: no room"
	if _, _, err := e.m.Bundle(ctx, pod, "creds", 1); err == nil || err.Error() != want {
		t.Fatalf("Bundle() = %v, want %q", err, want)
	}
	fail = false
	key1, chain1 := e.issue(t, pod)
	fail = true
	e.clock.Step(13 * time.Hour)
	if key, chain, err := e.m.Bundle(ctx, pod, "creds", 1); err != nil || !bytes.Equal(key, key1) || !bytes.Equal(chain, chain1) {
		t.Fatalf("failed refresh: Bundle() = %v, or the certificate changed", err)
	}
	noSA := certPod(projectionOf("ECDSAP256"))
	noSA.UID, noSA.Spec.ServiceAccountName = "other", "missing"
	if _, _, err := e.m.Bundle(ctx, noSA, "creds", 1); err == nil || !strings.HasPrefix(err.Error(), "while fetching service account: ") {
		t.Errorf("Bundle() without a service account = %v", err)
	}
	var unregistered error
	e.m, _ = podcert.New(podcert.Config{Client: e.client, NodeName: "node", NodeUID: func() types.UID { return "" }, Clock: e.clock})
	if _, _, unregistered = e.m.Bundle(ctx, pod, "creds", 1); unregistered == nil || !strings.HasPrefix(unregistered.Error(), "while getting node object from local cache: ") {
		t.Errorf("Bundle() before the node registered = %v", unregistered)
	}
}

// TestForget: a pod that is gone leaves nothing behind, its key bytes
// overwritten; a Bundle after it makes no request.
func TestForget(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	pod := certPod(projectionOf("ECDSAP256"))
	other := certPod(projectionOf("ECDSAP256"))
	other.UID = "other-uid"
	e.issue(t, pod)
	e.issue(t, other)
	if n := e.m.Pods(); n != 2 {
		t.Fatalf("Pods() = %d, want 2", n)
	}
	e.m.Forget(ctx, pod.UID)
	e.m.Forget(ctx, pod.UID) // idempotent
	if n := e.m.Pods(); n != 1 {
		t.Errorf("Pods() after Forget = %d, want 1", n)
	}
	if _, _, err := e.m.Bundle(ctx, other, "creds", 1); err != nil {
		t.Errorf("the other pod's Bundle() = %v", err)
	}
}

// TestBadProjection: a projection no request can be made for is refused
// before any key is made, with what is wrong.
func TestBadProjection(t *testing.T) {
	for _, tc := range []struct {
		name    string
		mutate  func(*corev1.PodCertificateProjection)
		wantErr string
	}{
		{"key type", func(p *corev1.PodCertificateProjection) { p.KeyType = "DSA1024" }, `keyType: unsupported value "DSA1024"`},
		{"signer", func(p *corev1.PodCertificateProjection) { p.SignerName = "test" }, `signerName "test": must be a fully qualified domain and path`},
		{"signer with two slashes", func(p *corev1.PodCertificateProjection) { p.SignerName = "example.com/a/b" }, `signerName "example.com/a/b"`},
		{"short lifetime", func(p *corev1.PodCertificateProjection) { p.MaxExpirationSeconds = ptr.To[int32](60) }, "maxExpirationSeconds 60: must be in the range [3600, 7862400]"},
		{"kubernetes.io lifetime", func(p *corev1.PodCertificateProjection) {
			p.SignerName, p.MaxExpirationSeconds = "kubernetes.io/kube-apiserver-client-pod", ptr.To[int32](2*86400)
		}, "must be in the range [3600, 86400]"},
		{"no path", func(p *corev1.PodCertificateProjection) { p.CredentialBundlePath = "" },
			"specify at least one of credentialBundlePath, keyPath, and certificateChainPath"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			src := projectionOf("ECDSAP256")
			tc.mutate(&src)
			_, _, err := e.m.Bundle(context.Background(), certPod(src), "creds", 1)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.HasPrefix(err.Error(), "invalid podCertificate projection: ") {
				t.Fatalf("Bundle() = %v, want %q", err, tc.wantErr)
			}
			if n := len(e.signer.Requests()); n != 0 {
				t.Errorf("%d requests for a bad projection", n)
			}
		})
	}
	e := newEnv(t)
	if _, _, err := e.m.Bundle(context.Background(), certPod(projectionOf("ECDSAP256")), "creds", 0); err == nil ||
		err.Error() != `pod has no podCertificate source 0 in projected volume "creds"` {
		t.Errorf("Bundle() of a token source = %v", err)
	}
}
