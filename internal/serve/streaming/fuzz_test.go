package streaming

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// FuzzParseStreamOptions: decoding the exec/attach streams never panics;
// accepted options ask for at least one stream, never stderr with a TTY,
// and each stream exactly when its parameter is "1"; /run's command splits
// back into the cmd parameter.
func FuzzParseStreamOptions(f *testing.F) {
	f.Fuzz(func(t *testing.T, rawQuery string) {
		q, _ := url.ParseQuery(rawQuery) // keeps what it could decode
		if cmd := parseRunCommand(q); strings.Join(cmd, " ") != q.Get("cmd") {
			t.Fatalf("%q: command %q does not join back to %q", rawQuery, cmd, q.Get("cmd"))
		}
		o, err := parseStreamOptions(q)
		if err != nil {
			if o != (streamOptions{}) {
				t.Fatalf("%q: error %v with options %+v", rawQuery, err, o)
			}
			return
		}
		is := func(p string) bool { return q.Get(p) == "1" }
		switch {
		case !o.Stdin && !o.Stdout && !o.Stderr:
			t.Fatalf("%q: accepted without a stream", rawQuery)
		case o.TTY && o.Stderr:
			t.Fatalf("%q: stderr with a TTY", rawQuery)
		case o.Stdin != is(corev1.ExecStdinParam) || o.Stdout != is(corev1.ExecStdoutParam) || o.TTY != is(corev1.ExecTTYParam):
			t.Fatalf("%q: options %+v", rawQuery, o)
		case o.Stderr != (is(corev1.ExecStderrParam) && !o.TTY):
			t.Fatalf("%q: stderr %v", rawQuery, o.Stderr)
		}
	})
}

// FuzzParsePorts: reading a port-forward request's ports never panics; a
// SPDY request has none in its query; an accepted WebSocket request has one
// port per comma-separated item of its port parameters, each in 1..65535.
func FuzzParsePorts(f *testing.F) {
	f.Fuzz(func(t *testing.T, rawQuery, upgrade, connection string) {
		r := httptest.NewRequest(http.MethodGet, "/portForward/ns/p", nil)
		r.URL.RawQuery = rawQuery
		r.Header.Set("Upgrade", upgrade)
		r.Header.Set("Connection", connection)
		ports, err := parsePorts(r)
		if err != nil {
			return
		}
		if !isWebSocket(r) {
			if ports != nil {
				t.Fatalf("SPDY request %q: ports %v", rawQuery, ports)
			}
			return
		}
		items := 0
		for _, v := range r.URL.Query()["port"] {
			items += len(strings.Split(v, ","))
		}
		if len(ports) != items || items == 0 {
			t.Fatalf("%q: %d ports %v from %d items", rawQuery, len(ports), ports, items)
		}
		for _, p := range ports {
			if p < 1 || p > 65535 {
				t.Fatalf("%q: port %d", rawQuery, p)
			}
		}
	})
}
