package cluster

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	cryptorand "crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"time"
)

// certValidity is how long every certificate of a development cluster is
// valid; a cluster lives for minutes to days.
const certValidity = 365 * 24 * time.Hour

// KeyPair is a certificate and its private key, PEM-encoded.
type KeyPair struct {
	CertPEM []byte
	KeyPEM  []byte
}

// CertSpec says what a certificate is for.
type CertSpec struct {
	CommonName   string
	Organization []string
	DNSNames     []string
	IPs          []net.IP
	Server       bool // ExtKeyUsageServerAuth
	Client       bool // ExtKeyUsageClientAuth
}

// CA signs the certificates of one cluster. It is immutable after NewCA
// and safe for concurrent use if its random source is.
type CA struct {
	cert *x509.Certificate
	key  crypto.Signer
	pair KeyPair
	rand io.Reader
	now  time.Time
}

// NewCA makes a self-signed CA named name, valid from an hour before now.
func NewCA(rand io.Reader, now time.Time, name string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand)
	if err != nil {
		return nil, fmt.Errorf("generate key for CA %q: %w", name, err)
	}
	serial, err := newSerial(rand)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(certValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("create CA certificate %q: %w", name, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parse CA certificate %q: %w", name, err)
	}
	keyPEM, err := encodeKey(key)
	if err != nil {
		return nil, err
	}
	return &CA{
		cert: cert,
		key:  key,
		pair: KeyPair{CertPEM: encodeCert(der), KeyPEM: keyPEM},
		rand: rand,
		now:  now,
	}, nil
}

// KeyPair returns the CA's own certificate and key.
func (ca *CA) KeyPair() KeyPair { return ca.pair }

// Issue makes a new key and a certificate for it signed by the CA.
func (ca *CA) Issue(spec CertSpec) (KeyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), ca.rand)
	if err != nil {
		return KeyPair{}, fmt.Errorf("generate key for %q: %w", spec.CommonName, err)
	}
	serial, err := newSerial(ca.rand)
	if err != nil {
		return KeyPair{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: spec.CommonName, Organization: spec.Organization},
		DNSNames:     spec.DNSNames,
		IPAddresses:  spec.IPs,
		NotBefore:    ca.now.Add(-time.Hour),
		NotAfter:     ca.now.Add(certValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  extKeyUsage(spec),
	}
	der, err := x509.CreateCertificate(ca.rand, tmpl, ca.cert, key.Public(), ca.key)
	if err != nil {
		return KeyPair{}, fmt.Errorf("create certificate %q: %w", spec.CommonName, err)
	}
	keyPEM, err := encodeKey(key)
	if err != nil {
		return KeyPair{}, err
	}
	return KeyPair{CertPEM: encodeCert(der), KeyPEM: keyPEM}, nil
}

func extKeyUsage(spec CertSpec) []x509.ExtKeyUsage {
	var u []x509.ExtKeyUsage
	if spec.Server {
		u = append(u, x509.ExtKeyUsageServerAuth)
	}
	if spec.Client {
		u = append(u, x509.ExtKeyUsageClientAuth)
	}
	return u
}

// NewServiceAccountKey makes the key pair that signs and verifies service
// account tokens: the private key and the PKIX public key, PEM-encoded.
func NewServiceAccountKey(rand io.Reader) (private, public []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand)
	if err != nil {
		return nil, nil, fmt.Errorf("generate service account key: %w", err)
	}
	private, err = encodeKey(key)
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return nil, nil, fmt.Errorf("marshal service account public key: %w", err)
	}
	return private, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), nil
}

// The certificates of a cluster, by what they are for.

// APIServerServingSpec is kube-apiserver's serving certificate: loopback,
// the in-cluster names of the kubernetes Service and its IP.
func APIServerServingSpec(serviceIP net.IP) CertSpec {
	return CertSpec{
		CommonName: "kube-apiserver",
		DNSNames: []string{"localhost", "kubernetes", "kubernetes.default",
			"kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		IPs:    []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback, serviceIP},
		Server: true,
	}
}

// LoopbackServingSpec is a serving certificate for a component that listens
// on loopback only (etcd, kube-controller-manager, kube-scheduler).
func LoopbackServingSpec(name string) CertSpec {
	return CertSpec{
		CommonName: name,
		DNSNames:   []string{"localhost"},
		IPs:        []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		Server:     true,
	}
}

// ClientSpec is a client certificate for user name in groups.
func ClientSpec(user string, groups ...string) CertSpec {
	return CertSpec{CommonName: user, Organization: groups, Client: true}
}

// NodeClientSpec is a kubelet's client certificate: the identity the Node
// authorizer and NodeRestriction recognise.
func NodeClientSpec(nodeName string) CertSpec {
	return ClientSpec("system:node:"+nodeName, "system:nodes")
}

func newSerial(rand io.Reader) (*big.Int, error) {
	n, err := cryptorand.Int(rand, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("generate serial number: %w", err)
	}
	return n.Add(n, big.NewInt(1)), nil
}

func encodeCert(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func encodeKey(key crypto.Signer) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("marshal private key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}
