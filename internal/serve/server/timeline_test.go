package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/berthk8s/berth/internal/pod/timeline"
)

var timelineT0 = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

// hostile is a name a pod controls, made to inject markup.
const hostile = `<script>alert("x")</script><b onmouseover=x>`

// fixtureTimeline has ns/web (a sandbox, a pull and a running start) and
// evil/pod, whose pod name, image and message are markup (the API server
// would refuse such a pod name; the page must not trust that).
func fixtureTimeline(namespace, name string) (timeline.Timeline, bool) {
	end := func(d time.Duration) *time.Time { t := timelineT0.Add(d); return &t }
	switch namespace + "/" + name {
	case "ns/web":
		return timeline.Timeline{Pod: "ns/web", UID: "u1", Created: timelineT0.Add(-time.Second), Now: timelineT0.Add(3 * time.Second),
			Stages: []timeline.Stage{
				{Name: timeline.StageSandbox, Start: timelineT0, End: end(time.Second), DurationSeconds: 1, Outcome: timeline.OutcomeOK},
				{Name: timeline.StageImage, Target: "nginx:1", Start: timelineT0.Add(time.Second), End: end(2 * time.Second), DurationSeconds: 1,
					Outcome: timeline.OutcomeOK, Message: "pulled", Bytes: 4096},
				{Name: timeline.StageContainerStart, Target: "web", Start: timelineT0.Add(2 * time.Second), DurationSeconds: 1, Outcome: timeline.OutcomeRunning},
			}}, true
	case "evil/pod":
		return timeline.Timeline{Pod: "evil/" + hostile, UID: "u2", Now: timelineT0.Add(time.Second), Stages: []timeline.Stage{
			{Name: timeline.StageImage, Target: hostile, Start: timelineT0, End: end(time.Second), DurationSeconds: 1,
				Outcome: timeline.OutcomeFailed, Message: "ErrImagePull: " + hostile},
		}}, true
	}
	return timeline.Timeline{}, false
}

func getTimeline(t *testing.T, path, accept string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, path, nil)
	r.Header.Set("Authorization", "Bearer pods")
	if accept != "" {
		r.Header.Set("Accept", accept)
	}
	rec := httptest.NewRecorder()
	testHandler(t, nil).ServeHTTP(rec, r)
	return rec
}

// TestTimelineJSON: the stable JSON shape, field by field.
func TestTimelineJSON(t *testing.T) {
	for _, accept := range []string{"", "application/json, */*", "*/*", "text/html;q=0.5, application/json"} {
		rec := getTimeline(t, "/pods/ns/web/timeline", accept)
		if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("Accept %q: %d %s, want 200 application/json", accept, rec.Code, rec.Header().Get("Content-Type"))
		}
		var got map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{
			"pod": "ns/web", "uid": "u1", "created": "2026-12-02T11:59:59Z", "now": "2026-12-02T12:00:03Z", "dropped": 0.0,
			"stages": []any{
				map[string]any{"name": "sandbox", "start": "2026-12-02T12:00:00Z", "end": "2026-12-02T12:00:01Z", "durationSeconds": 1.0, "outcome": "ok"},
				map[string]any{"name": "image", "target": "nginx:1", "start": "2026-12-02T12:00:01Z", "end": "2026-12-02T12:00:02Z",
					"durationSeconds": 1.0, "outcome": "ok", "message": "pulled", "bytes": 4096.0},
				map[string]any{"name": "container-start", "target": "web", "start": "2026-12-02T12:00:02Z", "durationSeconds": 1.0, "outcome": "running"},
			},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Accept %q: JSON (-want +got):\n%s", accept, diff)
		}
	}
}

// TestTimelineHTML: a browser gets the page, bars on the axis, and every
// string a pod controls escaped.
func TestTimelineHTML(t *testing.T) {
	accept := "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" // a browser's
	rec := getTimeline(t, "/pods/ns/web/timeline", accept)
	body := rec.Body.String()
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("%d %s, want 200 text/html", rec.Code, rec.Header().Get("Content-Type"))
	}
	for _, want := range []string{"Start timeline of ns/web", `class="bar ok" style="left:0%;width:33.33%"`,
		`class="bar ok" style="left:33.33%;width:33.33%"`, `class="bar running" style="left:66.67%;width:33.33%"`, "pulled (4096 bytes)", "nginx:1"} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "<script") {
		t.Errorf("page has a script:\n%s", body)
	}

	rec = getTimeline(t, "/pods/evil/pod/timeline", "text/html")
	body = rec.Body.String()
	if rec.Code != http.StatusOK {
		t.Fatalf("hostile pod: %d %s", rec.Code, body)
	}
	if strings.Contains(body, "<script>") || strings.Contains(body, "<b ") || strings.Contains(body, hostile) {
		t.Errorf("a pod's name injected markup:\n%s", body)
	}
	if n := strings.Count(body, "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;"); n < 4 {
		t.Errorf("the hostile name is escaped %d times, want in the title, heading, target and message:\n%s", n, body)
	}
}

func TestTimelineNotFound(t *testing.T) {
	for _, accept := range []string{"", "text/html"} {
		rec := getTimeline(t, "/pods/ns/gone/timeline", accept)
		if rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), `no start timeline for pod "ns/gone" on this node`) {
			t.Errorf("Accept %q: %d %q, want 404 naming the pod", accept, rec.Code, rec.Body.String())
		}
	}
}

func TestWantsHTML(t *testing.T) {
	tests := []struct {
		accept []string
		want   bool
	}{
		{nil, false},
		{[]string{"*/*"}, false},
		{[]string{"application/json, */*"}, false}, // kubectl get --raw
		{[]string{"text/html"}, true},
		{[]string{"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}, true},
		{[]string{"text/html;q=0.9, application/json"}, false},
		{[]string{"text/plain"}, false}, // not HTML: JSON, the default
		{[]string{"text/html, */*"}, false},
	}
	for _, tt := range tests {
		if got := wantsHTML(tt.accept); got != tt.want {
			t.Errorf("wantsHTML(%q) = %t, want %t", tt.accept, got, tt.want)
		}
	}
}
