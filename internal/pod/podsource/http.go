package podsource

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// DefaultHTTPCheckPeriod is how often the URL is fetched when no period is
// configured (upstream httpCheckFrequency).
const DefaultHTTPCheckPeriod = 20 * time.Second

// maxManifestBytes bounds what berth reads of one manifest: a file of the
// manifest directory or the body of the manifest URL.
const maxManifestBytes = 10 << 20

// HTTPConfig configures an HTTPPoller.
type HTTPConfig struct {
	// URL serves one Pod or a PodList, in YAML or JSON.
	URL string
	// Header is sent with every request (staticPodURLHeader).
	Header http.Header
	// NodeName is this node's name; static pod names get it as a suffix.
	NodeName string
	// Period is how often the URL is fetched; DefaultHTTPCheckPeriod when
	// zero.
	Period time.Duration
	// Clock drives the fetch ticker and stamps config.seen.
	Clock clock.WithTicker
	// Client does the requests; it should carry a timeout.
	Client *http.Client
}

// HTTPPoller reads static pods from a URL. It holds only its immutable
// configuration: all mutable state lives in the Run goroutine.
type HTTPPoller struct {
	cfg HTTPConfig
	// redacted is the URL without its password, for logs and errors.
	redacted string
	decoder  *manifestDecoder
}

// NewHTTPSource validates cfg and returns an HTTPPoller; it starts nothing.
func NewHTTPSource(cfg HTTPConfig) (*HTTPPoller, error) {
	if cfg.URL == "" || cfg.NodeName == "" || cfg.Clock == nil || cfg.Client == nil {
		return nil, errors.New("new http source: URL, node name, clock and client are required")
	}
	u, err := url.Parse(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("new http source: parse URL: %w", err)
	}
	if cfg.Period <= 0 {
		cfg.Period = DefaultHTTPCheckPeriod
	}
	cfg.Header = cfg.Header.Clone()
	d, err := newManifestDecoder()
	if err != nil {
		return nil, fmt.Errorf("new http source: %w", err)
	}
	return &HTTPPoller{cfg: cfg, redacted: u.Redacted(), decoder: d}, nil
}

// Run fetches the URL at once and then every Period, and sends a Snapshot
// to out when the pods change. A failed fetch or an invalid manifest keeps
// the previous pods (and, before the first success, leaves the source
// unseen), as upstream. Errors are logged once per distinct error. It
// blocks until ctx ends and then returns nil.
func (s *HTTPPoller) Run(ctx context.Context, out chan<- Snapshot) error {
	logger := klog.FromContext(ctx).WithValues("source", podutil.HTTPSource, "url", s.redacted)
	ctx = klog.NewContext(ctx, logger)
	ticker := s.cfg.Clock.NewTicker(s.cfg.Period)
	defer ticker.Stop()
	p := &httpPoll{src: s}
	for {
		if pods, changed := p.poll(ctx); changed {
			logger.V(2).Info("Static pods from URL changed", "pods", len(pods))
			select {
			case out <- Snapshot{Source: podutil.HTTPSource, Pods: pods}:
			case <-ctx.Done():
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C():
		}
	}
}

// httpPoll is the state between fetches. Owned by the Run goroutine.
type httpPoll struct {
	src *HTTPPoller
	// sent is set once a snapshot went out; sum is that body's sum.
	sent bool
	sum  [sha256.Size]byte
	// failedSum is the sum of the last body that failed to load, so the
	// same bad body is neither decoded nor logged again.
	failedSum [sha256.Size]byte
	// lastErr is the last error logged, so a lasting failure logs once.
	lastErr string
}

// poll fetches and loads the URL. changed is true when the pods differ from
// the last snapshot sent (or none was sent yet).
func (p *httpPoll) poll(ctx context.Context) (pods []*corev1.Pod, changed bool) {
	data, err := p.src.fetch(ctx)
	if err == nil {
		sum := sha256.Sum256(data)
		switch {
		case p.sent && sum == p.sum:
			p.recovered(ctx)
			return nil, false
		case p.lastErr != "" && sum == p.failedSum:
			return nil, false
		}
		if pods, err = p.src.load(ctx, data); err == nil {
			p.recovered(ctx)
			p.sent, p.sum = true, sum
			return pods, true
		}
		p.failedSum = sum
	}
	if ctx.Err() == nil && err.Error() != p.lastErr {
		klog.FromContext(ctx).Error(err, "Unable to read static pods from URL, keeping the previous ones")
		p.lastErr = err.Error()
	}
	return nil, false
}

func (p *httpPoll) recovered(ctx context.Context) {
	if p.lastErr != "" {
		klog.FromContext(ctx).Info("Static pods from URL readable again")
		p.lastErr = ""
	}
}

// load decodes a body. An empty body means no pods, as upstream.
func (s *HTTPPoller) load(ctx context.Context, data []byte) ([]*corev1.Pod, error) {
	if len(data) == 0 {
		return []*corev1.Pod{}, nil
	}
	o := origin{source: podutil.HTTPSource, location: s.cfg.URL, nodeName: s.cfg.NodeName, now: s.cfg.Clock.Now()}
	pods, warnings, err := loadManifest(s.decoder, data, o)
	logWarnings(klog.FromContext(ctx), "url", s.redacted, warnings)
	if err != nil {
		return nil, fmt.Errorf("load manifest from %q: %w", s.redacted, err)
	}
	return pods, nil
}

func (s *HTTPPoller) fetch(ctx context.Context) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.cfg.URL, nil)
	if err != nil {
		return nil, fmt.Errorf("build request for %q: %w", s.redacted, err)
	}
	req.Header = s.cfg.Header.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	resp, err := s.cfg.Client.Do(req)
	if err != nil {
		// The client's error names the URL, password redacted.
		return nil, fmt.Errorf("fetch static pods: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetch %q: unexpected status %s", s.redacted, resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxManifestBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read body of %q: %w", s.redacted, err)
	}
	if len(data) > maxManifestBytes {
		return nil, fmt.Errorf("read body of %q: larger than %d bytes", s.redacted, maxManifestBytes)
	}
	return data, nil
}
