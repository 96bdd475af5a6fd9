package cluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// pollInterval is how often a health endpoint is asked while waiting.
const pollInterval = 250 * time.Millisecond

// healthClient returns an HTTPS client that trusts caPEM and, if client is
// set, presents it.
func healthClient(caPEM []byte, client *KeyPair) (*http.Client, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, errors.New("parse CA certificate: no certificate found")
	}
	cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if client != nil {
		cert, err := tls.X509KeyPair(client.CertPEM, client.KeyPEM)
		if err != nil {
			return nil, fmt.Errorf("load client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return &http.Client{
		Timeout:   5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: cfg, DisableKeepAlives: true},
	}, nil
}

// waitHealthy polls url until it answers 200, the process exits, or ctx
// ends. The error carries the last answer and the tail of the process's log.
func waitHealthy(ctx context.Context, p *process, client *http.Client, url string) error {
	ticker := time.NewTicker(pollInterval)
	defer ticker.Stop()
	var last string
	for {
		ok, answer := probe(ctx, client, url)
		if ok {
			return nil
		}
		last = answer
		select {
		case <-ctx.Done():
			return p.failure(fmt.Errorf("wait for %s at %s: %w (last answer: %s)", p.name, url, ctx.Err(), last))
		case <-p.done:
			return p.failure(exitError(p.name, p.err))
		case <-ticker.C:
		}
	}
}

// probe asks url once: healthy when it answers 200.
func probe(ctx context.Context, client *http.Client, url string) (bool, string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false, err.Error()
	}
	resp, err := client.Do(req)
	if err != nil {
		return false, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 2048))
	if resp.StatusCode == http.StatusOK {
		return true, ""
	}
	return false, fmt.Sprintf("%s: %s", resp.Status, strings.TrimSpace(string(body)))
}
