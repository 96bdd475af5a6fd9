package podcertfake

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"sync"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/clock"
)

// Answer is what the signer does with a request.
type Answer int

const (
	Issue Answer = iota
	Deny
	Fail
	Pending
)

// Signer is a test signer. Its fields may be changed between calls, under
// no lock: tests drive it from one goroutine.
type Signer struct {
	// Mode, Reason and Message say what the next requests get.
	Mode            Answer
	Reason, Message string
	// Lifetime and RefreshAfter set notAfter and beginRefreshAt from the
	// clock's now (notBefore).
	Lifetime, RefreshAfter time.Duration

	clock clock.PassiveClock
	ca    *x509.Certificate
	caKey *ecdsa.PrivateKey

	mu       sync.Mutex // guards requests
	requests []*certificatesv1.PodCertificateRequest
}

// New returns a signer with a new CA, issuing certificates of a day that
// are due for refresh after 12 hours.
func New(clk clock.PassiveClock) (*Signer, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test signer CA"},
		NotBefore: clk.Now().Add(-time.Hour), NotAfter: clk.Now().Add(100 * 24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &Signer{Lifetime: 24 * time.Hour, RefreshAfter: 12 * time.Hour, clock: clk, ca: ca, caKey: key}, nil
}

// Pool holds the signer's CA.
func (s *Signer) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(s.ca)
	return p
}

// Attach makes the signer answer the requests created through c, naming
// each from its generateName as the API server would.
func (s *Signer) Attach(c *fake.Clientset) {
	c.PrependReactor("create", "podcertificaterequests", func(a k8stesting.Action) (bool, runtime.Object, error) {
		pcr := a.(k8stesting.CreateAction).GetObject().(*certificatesv1.PodCertificateRequest)
		s.mu.Lock()
		s.requests = append(s.requests, pcr.DeepCopy())
		n := len(s.requests)
		s.mu.Unlock()
		if pcr.Name == "" {
			pcr.Name = fmt.Sprintf("%s%d", pcr.GenerateName, n)
		}
		pcr.CreationTimestamp = metav1.NewTime(s.clock.Now())
		st, err := s.answer(pcr)
		if err != nil {
			return true, nil, err
		}
		pcr.Status = st
		return false, nil, nil // the tracker stores the object
	})
}

// Decide answers a request already made (one left Pending) as Mode says.
func (s *Signer) Decide(ctx context.Context, c kubernetes.Interface, namespace, name string) error {
	pcr, err := c.CertificatesV1().PodCertificateRequests(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if pcr.Status, err = s.answer(pcr); err != nil {
		return err
	}
	_, err = c.CertificatesV1().PodCertificateRequests(namespace).UpdateStatus(ctx, pcr, metav1.UpdateOptions{})
	return err
}

// Requests returns the requests made so far, as they were sent.
func (s *Signer) Requests() []*certificatesv1.PodCertificateRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*certificatesv1.PodCertificateRequest(nil), s.requests...)
}

func (s *Signer) answer(pcr *certificatesv1.PodCertificateRequest) (certificatesv1.PodCertificateRequestStatus, error) {
	cond := func(t string) certificatesv1.PodCertificateRequestStatus {
		return certificatesv1.PodCertificateRequestStatus{Conditions: []metav1.Condition{{
			Type: t, Status: metav1.ConditionTrue, Reason: s.Reason, Message: s.Message, LastTransitionTime: metav1.NewTime(s.clock.Now()),
		}}}
	}
	switch s.Mode {
	case Deny:
		return cond(certificatesv1.PodCertificateRequestConditionTypeDenied), nil
	case Fail:
		return cond(certificatesv1.PodCertificateRequestConditionTypeFailed), nil
	case Pending:
		return certificatesv1.PodCertificateRequestStatus{}, nil
	}
	csr, err := x509.ParseCertificateRequest(pcr.Spec.StubPKCS10Request)
	if err != nil {
		return certificatesv1.PodCertificateRequestStatus{}, fmt.Errorf("parse stub CSR: %w", err)
	}
	if err := csr.CheckSignature(); err != nil {
		return certificatesv1.PodCertificateRequestStatus{}, fmt.Errorf("stub CSR signature: %w", err)
	}
	st, _, err := Certificate(s.ca, s.caKey, csr.PublicKey, pcr.Spec.PodName, s.clock.Now(), s.Lifetime, s.RefreshAfter)
	if err != nil {
		return certificatesv1.PodCertificateRequestStatus{}, err
	}
	return st, nil
}

// Certificate issues a leaf certificate for pub from ca, valid from
// notBefore for lifetime, due for refresh after refreshAfter, as the
// issued status of a request (the e2e signer uses it too).
func Certificate(ca *x509.Certificate, caKey any, pub any, cn string, notBefore time.Time, lifetime, refreshAfter time.Duration) (certificatesv1.PodCertificateRequestStatus, *x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return certificatesv1.PodCertificateRequestStatus{}, nil, err
	}
	notBefore = notBefore.Truncate(time.Second)
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: cn},
		NotBefore: notBefore, NotAfter: notBefore.Add(lifetime),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, pub, caKey)
	if err != nil {
		return certificatesv1.PodCertificateRequestStatus{}, nil, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return certificatesv1.PodCertificateRequestStatus{}, nil, err
	}
	chain := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	return certificatesv1.PodCertificateRequestStatus{
		Conditions: []metav1.Condition{{Type: certificatesv1.PodCertificateRequestConditionTypeIssued, Status: metav1.ConditionTrue,
			Reason: "Issued", Message: "issued by the test signer", LastTransitionTime: metav1.NewTime(notBefore)}},
		CertificateChain: chain,
		NotBefore:        ptrTime(leaf.NotBefore),
		BeginRefreshAt:   ptrTime(notBefore.Add(refreshAfter)),
		NotAfter:         ptrTime(leaf.NotAfter),
	}, leaf, nil
}

func ptrTime(t time.Time) *metav1.Time {
	mt := metav1.NewTime(t)
	return &mt
}
