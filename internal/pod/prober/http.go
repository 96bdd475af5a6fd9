package prober

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

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
