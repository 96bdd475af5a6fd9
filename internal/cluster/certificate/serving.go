package certificate

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/certificate"
	"k8s.io/klog/v2"
)

// ServingConfig configures NewServing.
type ServingConfig struct {
	// Client sends the CSRs: the node's main API client.
	Client kubernetes.Interface
	// NodeName is the name in the subject.
	NodeName string
	// Addresses returns the node's addresses as last reported in its
	// status (nil before registration); they become the SANs.
	Addresses func() []corev1.NodeAddress
	// CertDir is --cert-dir, where the kubelet-server pairs are stored.
	// CertFile and KeyFile (tlsCertFile, tlsPrivateKeyFile) are read
	// when the store has no pair yet, as upstream.
	CertDir, CertFile, KeyFile string
	// RenewError and Rotated, if set, count failed renewals and record
	// how long the previous certificate lived, in seconds.
	RenewError func()
	Rotated    func(seconds float64)
}

// Serving is the kubelet API's serving certificate requested from the
// cluster (serverTLSBootstrap): a certificate Manager that asks for a
// kubernetes.io/kubelet-serving certificate with ServingTemplate once the
// node has an IP address, and renews it at 70-90% of its life. Current is
// safe for concurrent use; Run is called once.
type Serving struct {
	manager certificate.Manager
}

// NewServing builds the manager; it requests nothing before Run.
func NewServing(ctx context.Context, c ServingConfig) (*Serving, error) {
	if c.Client == nil || c.Addresses == nil {
		return nil, errors.New("create serving certificate manager: no API client or node addresses")
	}
	store, err := certificate.NewFileStoreWithLogger(klog.FromContext(ctx).V(2), servingPairPrefix, c.CertDir, c.CertDir, c.CertFile, c.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("open serving certificate store in %q: %w", c.CertDir, err)
	}
	mctx := context.WithoutCancel(ctx)
	m, err := certificate.NewManager(&certificate.Config{
		ClientsetFn: func(*tls.Certificate) (kubernetes.Interface, error) { return c.Client, nil },
		GetTemplate: func() *x509.CertificateRequest {
			return ServingTemplate(c.NodeName, c.Addresses())
		},
		SignerName:              certificatesv1.KubeletServingSignerName,
		GetUsages:               certificate.DefaultKubeletServingGetUsages,
		CertificateStore:        store,
		CertificateRenewFailure: counter(c.RenewError),
		CertificateRotation:     histogram(c.Rotated),
		Name:                    "kubelet-serving",
		Ctx:                     &mctx,
	})
	if err != nil {
		return nil, fmt.Errorf("create serving certificate manager: %w", err)
	}
	return &Serving{manager: m}, nil
}

// Current is the serving certificate, nil until one is issued: the kubelet
// API then fails every handshake, as upstream.
func (s *Serving) Current() *tls.Certificate { return s.manager.Current() }

// Run requests and renews the serving certificate until ctx ends.
func (s *Serving) Run(ctx context.Context) error {
	s.manager.Start()
	<-ctx.Done()
	s.manager.Stop()
	return nil
}

// counter and histogram adapt observer functions to the certificate
// Manager's metric interfaces; nil observes nothing.
type counter func()

func (f counter) Inc() {
	if f != nil {
		f()
	}
}

type histogram func(float64)

func (f histogram) Observe(v float64) {
	if f != nil {
		f(v)
	}
}
