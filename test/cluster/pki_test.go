package cluster

import (
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var testNow = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func parseCert(t *testing.T, certPEM []byte) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(certPEM)
	if block == nil || block.Type != "CERTIFICATE" {
		t.Fatalf("no CERTIFICATE block in %q", certPEM)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

func TestIssue(t *testing.T) {
	ca, err := NewCA(rand.Reader, testNow, "test-ca")
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(parseCert(t, ca.KeyPair().CertPEM))

	type subject struct {
		CN       string
		O        []string
		DNS      []string
		IPs      []string
		ExtUsage []x509.ExtKeyUsage
	}
	for _, tc := range []struct {
		name  string
		spec  CertSpec
		want  subject
		usage x509.ExtKeyUsage
		host  string // verified as a server name when set
	}{
		{
			name:  "node client",
			spec:  NodeClientSpec("node-a"),
			want:  subject{CN: "system:node:node-a", O: []string{"system:nodes"}, ExtUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}},
			usage: x509.ExtKeyUsageClientAuth,
		},
		{
			name:  "admin client",
			spec:  ClientSpec(AdminUser, mastersGroup),
			want:  subject{CN: AdminUser, O: []string{"system:masters"}, ExtUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}},
			usage: x509.ExtKeyUsageClientAuth,
		},
		{
			name: "apiserver serving",
			spec: APIServerServingSpec(net.ParseIP(ServiceIP)),
			want: subject{CN: "kube-apiserver",
				DNS: []string{"localhost", "kubernetes", "kubernetes.default",
					"kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
				IPs:      []string{"127.0.0.1", "::1", "10.0.0.1"},
				ExtUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}},
			usage: x509.ExtKeyUsageServerAuth,
			host:  "10.0.0.1",
		},
		{
			name: "loopback serving",
			spec: LoopbackServingSpec("etcd"),
			want: subject{CN: "etcd", DNS: []string{"localhost"}, IPs: []string{"127.0.0.1", "::1"},
				ExtUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}},
			usage: x509.ExtKeyUsageServerAuth,
			host:  "127.0.0.1",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kp, err := ca.Issue(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			cert := parseCert(t, kp.CertPEM)
			got := subject{CN: cert.Subject.CommonName, O: cert.Subject.Organization, DNS: cert.DNSNames, ExtUsage: cert.ExtKeyUsage}
			for _, ip := range cert.IPAddresses {
				got.IPs = append(got.IPs, ip.String())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("certificate (-want +got):\n%s", diff)
			}
			opts := x509.VerifyOptions{Roots: roots, CurrentTime: testNow, KeyUsages: []x509.ExtKeyUsage{tc.usage}, DNSName: tc.host}
			if _, err := cert.Verify(opts); err != nil {
				t.Errorf("verify against the CA: %v", err)
			}
			if _, err := pemKeyPair(kp); err != nil {
				t.Errorf("key pair: %v", err)
			}
		})
	}
}

func pemKeyPair(kp KeyPair) (any, error) {
	block, _ := pem.Decode(kp.KeyPEM)
	if block == nil {
		return nil, errors.New("no PEM block")
	}
	return x509.ParsePKCS8PrivateKey(block.Bytes)
}

func TestServiceAccountKey(t *testing.T) {
	priv, pub, err := NewServiceAccountKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pemKeyPair(KeyPair{KeyPEM: priv}); err != nil {
		t.Errorf("private key: %v", err)
	}
	block, _ := pem.Decode(pub)
	if block == nil || block.Type != "PUBLIC KEY" {
		t.Fatalf("public key PEM = %q", pub)
	}
	if _, err := x509.ParsePKIXPublicKey(block.Bytes); err != nil {
		t.Errorf("public key: %v", err)
	}
}
