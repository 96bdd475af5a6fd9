package logquery

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeJournalctl is put on PATH as journalctl: with --field it lists two
// units; otherwise, by FAKE_JOURNAL_MODE, it prints its arguments one a
// line, floods its output, or hangs.
const fakeJournalctl = `#!/bin/sh
if [ "$1" = "--field" ]; then printf 'kubelet.service\ncontainerd.service\n'; exit 0; fi
case "$FAKE_JOURNAL_MODE" in
flood) exec yes 0123456789abcdef ;;
hang) exec sleep 60 ;;
fail) echo "no journal files" >&2; exit 1 ;;
esac
for a in "$@"; do printf 'arg:%s\n' "$a"; done
`

// newTestHandler returns a query-mode handler over a log directory with
// a syslog, a file logger's log and a directory, with the fake journalctl
// first on PATH; plain file requests answer "file <path>".
func newTestHandler(t *testing.T, mode string, cfg Config) http.Handler {
	t.Helper()
	bin, logs := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "journalctl"), []byte(fakeJournalctl), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("FAKE_JOURNAL_MODE", mode)
	for name, data := range map[string]string{"syslog": "boot ok\n", "nginx.log": "GET /\n", "audit/audit.log": "a\n"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(logs, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(logs, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg.Dir = logs
	cfg.Files = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "file "+r.URL.Path)
	})
	return Handler(cfg)
}

func get(t *testing.T, h http.Handler, target string, header ...string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	body := rec.Body.String()
	if rec.Header().Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(rec.Body)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		body = string(b)
	}
	return rec.Code, body
}

func TestHandler(t *testing.T) {
	tests := []struct {
		name     string
		mode     string
		target   string
		header   []string
		wantCode int
		want     string
	}{
		{name: "a plain file", target: "/logs/syslog", wantCode: 200, want: "file /logs/syslog"},
		{name: "a journal unit", target: "/logs/?query=kubelet&tailLines=5&pattern=a%20b", wantCode: 200,
			want: "arg:--utc\narg:--no-pager\narg:--output=short-precise\narg:--pager-end\narg:--lines=5\narg:--unit=kubelet\narg:--grep=a b\n"},
		{name: "gzip", target: "/logs/?query=containerd", header: []string{"Accept-Encoding", "gzip"}, wantCode: 200,
			want: "arg:--utc\narg:--no-pager\narg:--output=short-precise\narg:--unit=containerd\n"},
		{name: "a file logger", target: "/logs/?query=nginx", wantCode: 200, want: "GET /\n"},
		{name: "a file logger in its directory", target: "/logs/?query=audit", wantCode: 200, want: "a\n"},
		{name: "a file logger with options", target: "/logs/?query=nginx&tailLines=1", wantCode: 200,
			want: "\noptions present and query resolved to log files for [nginx]\ntry without specifying options\n"},
		{name: "no log anywhere", target: "/logs/?query=nothing", wantCode: 200, want: "\nlog not found for nothing\n"},
		{name: "journalctl fails", mode: "fail", target: "/logs/?query=kubelet", wantCode: 200, want: "no journal files\n"},
		{name: "a file query", target: "/logs/?query=audit/audit.log", wantCode: 200, want: "file /logs/audit/audit.log"},
		// As upstream v1.37, whose os.Root refuses an absolute name.
		{name: "an absolute file query", target: "/logs/?query=/syslog", wantCode: 406, want: "statat /syslog: path escapes from parent"},
		{name: "a file query outside", target: "/logs/?query=/../../etc/passwd", wantCode: 406, want: "path escapes from parent"},
		{name: "a path in query mode", target: "/logs/syslog?query=kubelet", wantCode: 406, want: "path not allowed in query mode\n"},
		{name: "unsafe service", target: "/logs/?query=kubelet%3Breboot", wantCode: 406,
			want: `query: Invalid value: "kubelet;reboot": input contains unsupported characters` + "\n"},
		{name: "bad tailLines", target: "/logs/?query=kubelet&tailLines=x", wantCode: 400, want: `tailLines: Invalid value: "x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newTestHandler(t, tt.mode, Config{})
			code, body := get(t, h, tt.target, tt.header...)
			if code != tt.wantCode || !strings.Contains(body, tt.want) {
				t.Errorf("GET %s: %d %q, want %d with %q", tt.target, code, body, tt.wantCode, tt.want)
			}
		})
	}
}

// TestHandlerBounds: a journalctl that floods is cut at the cap, one that
// hangs at the deadline; either way the request ends.
func TestHandlerBounds(t *testing.T) {
	t.Run("output cap", func(t *testing.T) {
		h := newTestHandler(t, "flood", Config{MaxOutputBytes: 1 << 20})
		code, body := get(t, h, "/logs/?query=kubelet")
		if code != 200 || len(body) > 1<<20+100 || !strings.HasSuffix(body, "\noutput truncated at 1048576 bytes\n") {
			t.Errorf("flood: %d, %d bytes, ending %q", code, len(body), body[max(0, len(body)-60):])
		}
	})
	t.Run("deadline", func(t *testing.T) {
		h := newTestHandler(t, "hang", Config{Timeout: 300 * time.Millisecond})
		start := time.Now()
		if code, _ := get(t, h, "/logs/?query=kubelet"); code != 200 {
			t.Errorf("hang: %d", code)
		}
		if took := time.Since(start); took > 10*time.Second {
			t.Errorf("a hanging journalctl held the request %s", took)
		}
	})
}
