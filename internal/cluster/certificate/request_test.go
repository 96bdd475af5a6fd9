package certificate

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"net"
	"testing"

	"github.com/google/go-cmp/cmp"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
)

func TestClientTemplate(t *testing.T) {
	want := &x509.CertificateRequest{Subject: pkix.Name{CommonName: "system:node:worker-1", Organization: []string{"system:nodes"}}}
	if diff := cmp.Diff(want, ClientTemplate("worker-1")); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestServingTemplate: the SANs are the node's host names and addresses,
// each once, sorted; without an IP there is no request, as upstream.
func TestServingTemplate(t *testing.T) {
	subject := pkix.Name{CommonName: "system:node:worker-1", Organization: []string{"system:nodes"}}
	ips := func(s ...string) []net.IP {
		out := make([]net.IP, 0, len(s))
		for _, a := range s {
			out = append(out, net.ParseIP(a))
		}
		return out
	}
	tests := []struct {
		name  string
		addrs []corev1.NodeAddress
		want  *x509.CertificateRequest
	}{
		{"no addresses yet", nil, nil},
		{"host name only: no request", []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: "worker-1"}}, nil},
		{"host name and internal IP",
			[]corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.5"}, {Type: corev1.NodeHostName, Address: "worker-1"}},
			&x509.CertificateRequest{Subject: subject, DNSNames: []string{"worker-1"}, IPAddresses: ips("10.0.0.5")}},
		{"every kind, duplicates and empties dropped, sorted",
			[]corev1.NodeAddress{
				{Type: corev1.NodeExternalIP, Address: "203.0.113.9"},
				{Type: corev1.NodeInternalIP, Address: "10.0.0.5"},
				{Type: corev1.NodeInternalIP, Address: "fd00::5"},
				{Type: corev1.NodeInternalIP, Address: "10.0.0.5"},
				{Type: corev1.NodeHostName, Address: "worker-1"},
				{Type: corev1.NodeInternalDNS, Address: "worker-1.cluster.internal"},
				{Type: corev1.NodeExternalDNS, Address: "worker-1.example.com"},
				{Type: corev1.NodeInternalDNS, Address: ""},
			},
			&x509.CertificateRequest{Subject: subject,
				DNSNames:    []string{"worker-1", "worker-1.cluster.internal", "worker-1.example.com"},
				IPAddresses: ips("10.0.0.5", "203.0.113.9", "fd00::5")}},
		{"a host name that is an IP is an IP SAN",
			[]corev1.NodeAddress{{Type: corev1.NodeHostName, Address: "192.168.1.7"}},
			&x509.CertificateRequest{Subject: subject, IPAddresses: ips("192.168.1.7")}},
		{"an internal IP that does not parse is dropped",
			[]corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "not-an-ip"}, {Type: corev1.NodeInternalIP, Address: "10.0.0.5"}},
			&x509.CertificateRequest{Subject: subject, IPAddresses: ips("10.0.0.5")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ServingTemplate("worker-1", tc.addrs)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestCSRName: the same request always has the same name, and a change of
// key, subject or usages changes it.
func TestCSRName(t *testing.T) {
	key := func() any {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k.Public()
	}
	k1, k2 := key(), key()
	usages := []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}
	base, err := csrName(k1, nodeSubject("n1"), usages)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := csrName(k1, nodeSubject("n1"), usages)
	if base != again || len(base) != len("node-csr-")+43 {
		t.Errorf("names %q and %q: want equal, node-csr- and 43 characters", base, again)
	}
	for name, args := range map[string]struct {
		key     any
		subject pkix.Name
		usages  []certificatesv1.KeyUsage
	}{
		"other key":    {k2, nodeSubject("n1"), usages},
		"other node":   {k1, nodeSubject("n2"), usages},
		"other usages": {k1, nodeSubject("n1"), usages[:1]},
		// The delimiter keeps "n1"+"system:nodes" from hashing like a
		// shifted split.
		"shifted split": {k1, pkix.Name{CommonName: "system:node:n1system:", Organization: []string{"nodes"}}, usages},
	} {
		got, err := csrName(args.key, args.subject, args.usages)
		if err != nil {
			t.Fatal(err)
		}
		if got == base {
			t.Errorf("%s: same name %q", name, got)
		}
	}
}
