package podsource

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

const podListYAML = `apiVersion: v1
kind: PodList
items:
- metadata: {name: a}
  spec: {containers: [{name: c, image: "i:1"}]}
- metadata: {name: b}
  spec: {containers: [{name: c, image: "i:1"}]}
`

// manifestServer serves whatever body and status the test sets, and
// reports each request's header on requests.
type manifestServer struct {
	mu       sync.Mutex
	status   int
	body     string
	requests chan http.Header
}

func (s *manifestServer) set(status int, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status, s.body = status, body
}

func (s *manifestServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	status, body := s.status, s.body
	s.mu.Unlock()
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
	s.requests <- r.Header.Clone()
}

func startHTTPSource(t *testing.T, status int, body string) (*sourceHarness, *manifestServer, string) {
	t.Helper()
	ms := &manifestServer{status: status, body: body, requests: make(chan http.Header, 100)}
	srv := httptest.NewServer(ms)
	t.Cleanup(srv.Close)
	clk := clocktesting.NewFakeClock(testNow)
	s, err := NewHTTPSource(HTTPConfig{
		URL: srv.URL + "/pods", Header: http.Header{"Authorization": {"Bearer t0ken"}},
		NodeName: "node1", Period: testPeriod, Clock: clk, Client: &http.Client{Timeout: waitTimeout},
	})
	if err != nil {
		t.Fatal(err)
	}
	return runSource(t, s.Run, clk), ms, srv.URL + "/pods"
}

// fetch makes the source poll once more and waits until the server
// answered it.
func fetch(t *testing.T, h *sourceHarness, ms *manifestServer) http.Header {
	t.Helper()
	h.clock.Step(testPeriod)
	return awaitRequest(t, ms)
}

func awaitRequest(t *testing.T, ms *manifestServer) http.Header {
	t.Helper()
	select {
	case hdr := <-ms.requests:
		return hdr
	case <-time.After(waitTimeout):
		t.Fatal("the source made no request")
		return nil
	}
}

func podNames(s Snapshot) []string {
	var names []string
	for _, p := range s.Pods {
		names = append(names, p.Name)
	}
	return names
}

func TestHTTPSource(t *testing.T) {
	h, ms, url := startHTTPSource(t, http.StatusOK, podYAML)
	if got := awaitRequest(t, ms).Get("Authorization"); got != "Bearer t0ken" {
		t.Errorf("Authorization header = %q", got)
	}
	s := h.next(t)
	if diff := cmp.Diff([]string{"web-node1"}, podNames(s)); diff != "" || s.Source != podutil.HTTPSource {
		t.Fatalf("first snapshot from %q (-want +got):\n%s", s.Source, diff)
	}
	if s.Pods[0].Annotations[podutil.ConfigSourceAnnotation] != podutil.HTTPSource {
		t.Errorf("source annotation = %q", s.Pods[0].Annotations[podutil.ConfigSourceAnnotation])
	}

	// Unchanged content, a server error and an invalid manifest all keep
	// the pods: nothing is sent until the PodList arrives.
	fetch(t, h, ms)
	ms.set(http.StatusInternalServerError, "boom")
	fetch(t, h, ms)
	fetch(t, h, ms)
	ms.set(http.StatusOK, "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {containers: []}\n")
	fetch(t, h, ms)
	ms.set(http.StatusOK, podListYAML)
	fetch(t, h, ms)
	if diff := cmp.Diff([]string{"a-node1", "b-node1"}, podNames(h.next(t))); diff != "" {
		t.Errorf("pod list snapshot (-want +got):\n%s", diff)
	}

	logs := h.logs.Data()
	var statusErrs, invalidErrs int
	for _, e := range logs {
		if e.Err == nil || !strings.Contains(e.Err.Error(), url) {
			continue
		}
		switch {
		case strings.Contains(e.Err.Error(), "500"):
			statusErrs++
		case strings.Contains(e.Err.Error(), "spec.containers"):
			invalidErrs++
		}
	}
	if statusErrs != 1 || invalidErrs != 1 {
		t.Errorf("logged %d status and %d invalid-pod errors naming the URL, want 1 each:\n%s", statusErrs, invalidErrs, h.logs.String())
	}

	// An empty body means no pods.
	ms.set(http.StatusOK, "")
	fetch(t, h, ms)
	if s := h.next(t); len(s.Pods) != 0 {
		t.Errorf("empty body gave pods %v", podNames(s))
	}
}

func TestHTTPSourceUnseenUntilFirstSuccess(t *testing.T) {
	h, ms, _ := startHTTPSource(t, http.StatusNotFound, "")
	awaitRequest(t, ms)
	fetch(t, h, ms)
	ms.set(http.StatusOK, podYAML)
	fetch(t, h, ms)
	// Had a failure sent anything, this would be an empty snapshot.
	if diff := cmp.Diff([]string{"web-node1"}, podNames(h.next(t))); diff != "" {
		t.Errorf("first snapshot (-want +got):\n%s", diff)
	}
}

func TestNewHTTPSourceValidates(t *testing.T) {
	if _, err := NewHTTPSource(HTTPConfig{URL: "http://x"}); err == nil {
		t.Error("want an error without node name, clock and client")
	}
}
