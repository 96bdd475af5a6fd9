package apiproxy

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Fault is what the proxy answers every request with while it is set.
type Fault struct {
	// Status is the HTTP status (http.StatusTooManyRequests, ...).
	Status int
	// RetryAfter, when set, is sent as Retry-After (whole seconds), which
	// client-go honours for 429 and 5xx answers.
	RetryAfter time.Duration
}

// Proxy forwards a kubelet's API requests. Its methods are safe for
// concurrent use.
type Proxy struct {
	kubeconfig string
	srv        *http.Server

	mu sync.Mutex // guards the fields below
	// fault is the fault set, nil for none.
	fault *Fault
	// inflight cancels the requests being forwarded, by a key of their own.
	inflight map[*http.Request]context.CancelFunc
	// requests and refused count the requests seen and those answered
	// with the fault.
	requests, refused int
}

// Start serves on a loopback port, forwarding to the API server of
// kubeconfig with its credentials, and writes into dir a kubeconfig for
// the kubelet that names the proxy (with the proxy's own CA) and keeps
// kubeconfig's user.
func Start(kubeconfig, dir string) (*Proxy, error) {
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("read kubeconfig %q: %w", kubeconfig, err)
	}
	target, err := url.Parse(rc.Host)
	if err != nil {
		return nil, fmt.Errorf("parse API server address %q: %w", rc.Host, err)
	}
	transport, err := rest.TransportFor(rc)
	if err != nil {
		return nil, fmt.Errorf("build the API server transport: %w", err)
	}
	cert, caPEM, err := servingCert()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	p := &Proxy{inflight: map[*http.Request]context.CancelFunc{}}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = transport
	rp.FlushInterval = -1 // watches stream
	p.srv = &http.Server{
		Handler:           p.handler(rp),
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 10 * time.Second,
	}
	p.kubeconfig = filepath.Join(dir, "apiproxy.kubeconfig")
	if err := writeKubeconfig(kubeconfig, p.kubeconfig, "https://"+ln.Addr().String(), caPEM); err != nil {
		_ = ln.Close()
		return nil, err
	}
	go func() { _ = p.srv.ServeTLS(ln, "", "") }()
	return p, nil
}

// Kubeconfig is the kubeconfig that sends a kubelet through the proxy.
func (p *Proxy) Kubeconfig() string { return p.kubeconfig }

// Close stops the proxy and cuts every request in flight.
func (p *Proxy) Close() error { return p.srv.Close() }

// Inject sets f: the requests in flight are cut, and every new one is
// answered with f until Clear.
func (p *Proxy) Inject(f Fault) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fault = &f
	for _, cancel := range p.inflight {
		cancel()
	}
}

// Clear removes the fault.
func (p *Proxy) Clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fault = nil
}

// Counts returns the requests seen and those answered with a fault, since
// the start.
func (p *Proxy) Counts() (requests, refused int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.requests, p.refused
}

func (p *Proxy) handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		p.mu.Lock()
		p.requests++
		f := p.fault
		if f != nil {
			p.refused++
		} else {
			p.inflight[r] = cancel
		}
		p.mu.Unlock()
		if f != nil {
			writeFault(w, *f)
			return
		}
		defer func() {
			p.mu.Lock()
			delete(p.inflight, r)
			p.mu.Unlock()
		}()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// writeFault answers with f's status and a metav1.Status body, as the API
// server does.
func writeFault(w http.ResponseWriter, f Fault) {
	reason := metav1.StatusReasonInternalError
	if f.Status == http.StatusTooManyRequests {
		reason = metav1.StatusReasonTooManyRequests
	}
	st := metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Code: int32(f.Status), Reason: reason,
		Message: fmt.Sprintf("apiproxy: injected %d", f.Status),
	}
	if f.RetryAfter > 0 {
		secs := int(f.RetryAfter.Round(time.Second) / time.Second)
		w.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
		st.Details = &metav1.StatusDetails{RetryAfterSeconds: int32(max(secs, 1))}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(f.Status)
	_ = json.NewEncoder(w).Encode(st)
}

// servingCert makes a self-signed certificate for 127.0.0.1, valid a day,
// and returns it with its PEM (the kubelet's CA for the proxy).
func servingCert() (tls.Certificate, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("generate the proxy's key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "apiproxy"},
		NotBefore:    time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		IsCA:        true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("make the proxy's certificate: %w", err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("encode the proxy's key: %w", err)
	}
	cert, err := tls.X509KeyPair(certPEM, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("load the proxy's certificate: %w", err)
	}
	return cert, certPEM, nil
}

// writeKubeconfig writes to path the kubeconfig at from with every
// cluster's server set to server and its CA to caPEM.
func writeKubeconfig(from, path, server string, caPEM []byte) error {
	cfg, err := clientcmd.LoadFromFile(from)
	if err != nil {
		return fmt.Errorf("read kubeconfig %q: %w", from, err)
	}
	if len(cfg.Clusters) == 0 {
		return errors.New("kubeconfig " + from + " names no cluster")
	}
	for _, c := range cfg.Clusters {
		c.Server, c.CertificateAuthority, c.CertificateAuthorityData = server, "", caPEM
	}
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("write kubeconfig %q: %w", path, err)
	}
	return nil
}
