package server

import (
	"bytes"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"time"

	"github.com/berthk8s/berth/internal/pod/timeline"
)

// timelinePath is the pattern of a pod's start timeline. Below /pods, it
// is authorized as /pods is: nodes/pods, falling back to nodes/proxy
// (RequestAttributes).
const timelinePath = "GET /pods/{namespace}/{pod}/timeline"

// TimelineFunc returns the start timeline of the pod namespace/name
// (timeline.Recorder.Get); false for a pod berth has none of.
type TimelineFunc func(namespace, name string) (timeline.Timeline, bool)

// podTimeline serves GET /pods/{namespace}/{pod}/timeline: the
// timeline.Timeline as JSON, or as an HTML page for a client that prefers
// text/html (a browser).
func podTimeline(get TimelineFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ns, name := r.PathValue("namespace"), r.PathValue("pod")
		w.Header().Set("Vary", "Accept")
		t, ok := get(ns, name)
		if !ok {
			http.Error(w, fmt.Sprintf("no start timeline for pod %q on this node: berth has not admitted it since it started, or it is gone",
				ns+"/"+name), http.StatusNotFound)
			return
		}
		if !wantsHTML(r.Header.Values("Accept")) {
			writeJSON(w, t)
			return
		}
		var b bytes.Buffer
		if err := timelinePage.Execute(&b, timelineView(t)); err != nil {
			http.Error(w, "render timeline: "+err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
		_, _ = w.Write(b.Bytes())
	}
}

// wantsHTML reports whether the Accept header prefers text/html to JSON
// (a browser's does; kubectl's does not).
func wantsHTML(accept []string) bool { return prefersToJSON(accept, "text/html") }

// pageView is what the HTML page shows: the timeline and each stage's
// bar, in percent of the axis from the first start to the last end.
type pageView struct {
	T      timeline.Timeline
	Span   string
	Stages []stageView
}

type stageView struct {
	timeline.Stage
	Left, Width float64
	Duration    string
}

// timelineView lays the stages out on one time axis. It is pure.
func timelineView(t timeline.Timeline) pageView {
	v := pageView{T: t}
	if len(t.Stages) == 0 {
		return v
	}
	first, last := t.Stages[0].Start, t.Now
	for _, s := range t.Stages {
		if s.Start.Before(first) {
			first = s.Start
		}
		if s.End != nil && s.End.After(last) {
			last = *s.End
		}
	}
	span := last.Sub(first)
	v.Span = span.Round(time.Millisecond).String()
	for _, s := range t.Stages {
		end := t.Now
		if s.End != nil {
			end = *s.End
		}
		sv := stageView{Stage: s, Duration: time.Duration(s.DurationSeconds * float64(time.Second)).Round(time.Millisecond).String()}
		if span > 0 {
			sv.Left = pct(s.Start.Sub(first), span)
			sv.Width = math.Max(pct(end.Sub(s.Start), span), 0.2)
		}
		v.Stages = append(v.Stages, sv)
	}
	return v
}

func pct(d, of time.Duration) float64 {
	return math.Round(float64(d)/float64(of)*10000) / 100
}

// timelinePage is the HTML view; html/template escapes every string the
// pod controls (names, images, messages).
var timelinePage = template.Must(template.New("timeline").Parse(`<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Start timeline of {{.T.Pod}}</title>
<style>
body{font:14px sans-serif;margin:1em}
table{border-collapse:collapse;width:100%}
td,th{padding:2px 6px;text-align:left;white-space:nowrap;vertical-align:top}
td.axis{width:55%;position:relative}
div.bar{position:relative;height:14px;border-radius:2px;min-width:2px}
.ok{background:#4a8}.failed{background:#d54}.running{background:#48c}
td.msg{white-space:normal;color:#555}
</style></head><body>
<h1>Start timeline of {{.T.Pod}}</h1>
<p>UID {{.T.UID}}, created {{.T.Created.UTC.Format "2006-01-02T15:04:05Z"}}, read {{.T.Now.UTC.Format "2006-01-02T15:04:05.000Z"}}{{if .Span}}; the axis spans {{.Span}}{{end}}.{{if .T.Dropped}} {{.T.Dropped}} older entries were dropped.{{end}}</p>
<table>
<tr><th>stage</th><th>target</th><th>outcome</th><th>duration</th><th>time</th><th>message</th></tr>
{{range .Stages}}<tr><td>{{.Name}}</td><td>{{.Target}}</td><td>{{.Outcome}}</td><td>{{.Duration}}</td>
<td class="axis"><div class="bar {{.Outcome}}" style="left:{{.Left}}%;width:{{.Width}}%"></div></td>
<td class="msg">{{.Message}}{{if .Bytes}} ({{.Bytes}} bytes){{end}}{{with .Progress}}; {{.DoneBytes}} of {{.TotalBytes}} bytes at {{printf "%.0f" .BytesPerSecond}} B/s{{end}}</td></tr>
{{else}}<tr><td colspan="6">no stage recorded yet</td></tr>
{{end}}</table></body></html>
`))
