package server

import (
	"bytes"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
)

// evictionPath serves the eviction explainer: a debugging handler,
// authorized as nodes/proxy like /debug/pprof/.
const evictionPath = "/debug/eviction"

// EvictionReport is the eviction manager's explanation of its last pass
// (eviction.Explanation): /debug/eviction encodes it as JSON, or, for a
// client that asks for text/plain, writes it with WriteText.
type EvictionReport interface {
	WriteText(w io.Writer) error
}

// EvictionFunc returns the eviction manager's explanation of its last
// pass (eviction.Manager.Explain), which takes no stats of its own; it
// says so itself when the manager has not observed the node yet.
type EvictionFunc func() EvictionReport

// evictionExplainer serves GET /debug/eviction.
func evictionExplainer(explain EvictionFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		report := explain()
		w.Header().Set("Vary", "Accept")
		if !wantsText(r.Header.Values("Accept")) {
			writeJSON(w, report)
			return
		}
		var b bytes.Buffer
		if err := report.WriteText(&b); err != nil {
			http.Error(w, "write eviction explanation: "+err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		_, _ = w.Write(b.Bytes())
	}
}

// wantsText reports whether the Accept header prefers text/plain to JSON
// (prefersToJSON).
func wantsText(accept []string) bool { return prefersToJSON(accept, "text/plain") }

// prefersToJSON reports whether the Accept header prefers the text type
// want (or text/*) to JSON (application/json, application/*, */* or no
// Accept at all); equal weights go to JSON, the default.
func prefersToJSON(accept []string, want string) bool {
	var text, json float64
	for _, field := range accept {
		for _, part := range strings.Split(field, ",") {
			typ, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			q := 1.0
			if v, ok := params["q"]; ok {
				if q, err = strconv.ParseFloat(v, 64); err != nil {
					continue
				}
			}
			switch typ {
			case want, "text/*":
				text = max(text, q)
			case "application/json", "application/*", "*/*":
				json = max(json, q)
			}
		}
	}
	return text > json
}
