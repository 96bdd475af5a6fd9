package prober

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// UserAgent is the User-Agent of HTTP and gRPC probes, upstream's
// "kube-probe/<major>.<minor>" for the Kubernetes version berth implements.
const UserAgent = "kube-probe/1.37"

// maxBody bounds the response body an HTTP probe reads (10 KiB).
const maxBody = 10 << 10

// newTransport returns the probes' HTTP transport: no keep-alives, no
// proxy, no compression, server certificates not verified (as upstream).
func newTransport() *http.Transport {
	return &http.Transport{
		TLSClientConfig:    &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // upstream probes skip verification
		DisableKeepAlives:  true,
		DisableCompression: true,
		Proxy:              nil,
		DialContext:        (&net.Dialer{}).DialContext,
	}
}

// httpRequest builds the probe's GET request: host defaults to the pod
// IP, the port is resolved by number or name, the probe's headers are
// added, with upstream's User-Agent and "Accept: */*" unless given (an
// empty Accept removes it) and the Host header as the request host.
func httpRequest(ctx context.Context, a *corev1.HTTPGetAction, c *corev1.Container, podIP string) (*http.Request, error) {
	host := a.Host
	if host == "" {
		host = podIP
	}
	port, err := resolvePort(a.Port, c)
	if err != nil {
		return nil, err
	}
	scheme := strings.ToLower(string(a.Scheme))
	if scheme == "" {
		scheme = "http"
	}
	u, err := url.Parse(a.Path)
	if err != nil {
		u = &url.URL{Path: a.Path}
	}
	u.Scheme, u.Host = scheme, net.JoinHostPort(host, strconv.Itoa(port))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("build probe request for %q: %w", u.String(), err)
	}
	headers := http.Header{}
	for _, h := range a.HTTPHeaders {
		headers.Add(h.Name, h.Value)
	}
	if _, ok := headers["User-Agent"]; !ok {
		headers.Set("User-Agent", UserAgent)
	}
	if _, ok := headers["Accept"]; !ok {
		headers.Set("Accept", "*/*")
	} else if headers.Get("Accept") == "" {
		headers.Del("Accept")
	}
	req.Header = headers
	req.Host = headers.Get("Host")
	return req, nil
}

// httpProbe sends req with the timeout. Redirects are followed only to the
// same host, at most 10; a redirect to another host ends the probe with the
// redirect response (a warning).
func httpProbe(tr http.RoundTripper, req *http.Request, timeout time.Duration) (outcome, string, error) {
	client := &http.Client{Transport: tr, Timeout: timeout, CheckRedirect: sameHostRedirects}
	res, err := client.Do(req)
	if err != nil {
		// Connection errors and timeouts are failures, as upstream.
		return outcomeFailure, err.Error(), nil
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, maxBody))
	if err != nil {
		return outcomeFailure, "", fmt.Errorf("read probe response from %q: %w", req.URL.String(), err)
	}
	o, out := classifyHTTP(res.StatusCode, string(body))
	return o, out, nil
}

func sameHostRedirects(req *http.Request, via []*http.Request) error {
	if req.URL.Hostname() != via[0].URL.Hostname() {
		return http.ErrUseLastResponse
	}
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	return nil
}

// classifyHTTP maps a response to an outcome as upstream: 200-299 success
// with the body as output, 300-399 (a redirect not followed) a warning,
// anything else a failure whose message omits the body.
func classifyHTTP(code int, body string) (outcome, string) {
	switch {
	case code >= http.StatusOK && code < http.StatusMultipleChoices:
		return outcomeSuccess, body
	case code >= http.StatusMultipleChoices && code < http.StatusBadRequest:
		return outcomeWarning, fmt.Sprintf("Probe terminated redirects, Response body: %v", body)
	}
	return outcomeFailure, fmt.Sprintf("HTTP probe failed with statuscode: %d", code)
}
