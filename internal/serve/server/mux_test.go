package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// grants authorizes "user/subresource" pairs; "*" as subresource is all.
type grants map[string]bool

func (g grants) Authorize(_ context.Context, a Attributes) (bool, string, error) {
	if g["error"] {
		return false, "", errors.New("webhook down")
	}
	return g[a.User.Name+"/"+a.Subresource] || g[a.User.Name+"/*"], "", nil
}

// echo writes the path values it was given.
var echo = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	fmt.Fprintf(w, "%s %s/%s/%s/%s", r.Method, r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("uid"), r.PathValue("container"))
})

func testHandler(t *testing.T, mutate func(*Config)) http.Handler {
	t.Helper()
	logDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(logDir, "syslog"), []byte("boot ok\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("s3cret"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(logDir, "escape")); err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		Health: func() error { return nil },
		Pods:   func() []corev1.Pod { return nil },
		RunningPods: func(context.Context) (map[types.UID]*runtimestate.Pod, error) {
			return map[types.UID]*runtimestate.Pod{"u1": {UID: "u1", Name: "web", Namespace: "default",
				Sandboxes: []runtimestate.Sandbox{{State: runtimestate.SandboxReady}}}}, nil
		},
		Configz:  map[string]any{"port": 10250},
		Handlers: Handlers{Exec: echo, Attach: echo, PortForward: echo, Run: echo, ContainerLogs: echo, Stats: echo, MetricsCadvisor: echo},
		Auth: Auth{
			Authn: NewAuthenticator(AuthnConfig{Tokens: fakeTokens{
				"admin": {Name: "admin"}, "stats": {Name: "stats-reader"}, "pods": {Name: "pod-reader"}, "proxy": {Name: "proxier"},
				"metrics": {Name: "metrics-reader"},
			}}),
			Authz: grants{"admin/*": true, "stats-reader/stats": true, "pod-reader/pods": true, "proxier/proxy": true,
				"metrics-reader/metrics": true},
			NodeName: "node-1",
		},
		EnableDebuggingHandlers: true, EnableSystemLogHandler: true, EnableProfilingHandler: true,
		EnableDebugFlagsHandler: true, SetVerbosity: func(v string) (string, error) {
			if v != "4" {
				return "", fmt.Errorf("bad verbosity %q", v)
			}
			return "verbosity set to " + v, nil
		},
		LogDir:   logDir,
		Eviction: func() EvictionReport { return fakeReport{Observed: true} },
		Timeline: fixtureTimeline,
	}
	if mutate != nil {
		mutate(&cfg)
	}
	h, err := NewHandler(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestKubeletAPI(t *testing.T) {
	noDebug := func(c *Config) { c.EnableDebuggingHandlers = false }
	tests := []struct {
		name     string
		mutate   func(*Config)
		method   string
		path     string
		body     string
		token    string
		wantCode int
		wantBody string
	}{
		{name: "no credentials", path: "/pods", wantCode: 401, wantBody: "Unauthorized"},
		{name: "invalid token", path: "/pods", token: "nope", wantCode: 401, wantBody: "Unauthorized"},
		{name: "unknown path after auth", path: "/nothing", token: "admin", wantCode: 404},
		{name: "unknown path needs auth first", path: "/nothing", wantCode: 401},
		{name: "nil handler is 404", path: "/metrics", token: "admin", wantCode: 404},
		{name: "healthz", path: "/healthz", token: "admin", wantCode: 200, wantBody: "ok"},
		{name: "pods via nodes/pods", path: "/pods", token: "pods", wantCode: 200, wantBody: `"kind":"PodList"`},
		{name: "pods via nodes/proxy", path: "/pods", token: "proxy", wantCode: 200, wantBody: `"kind":"PodList"`},
		{name: "pods refused", path: "/pods", token: "stats", wantCode: 403,
			wantBody: "Forbidden (user=stats-reader, verb=get, resource=nodes, subresource(s)=[pods proxy])"},
		{name: "stats allowed", path: "/stats/summary", token: "stats", wantCode: 200},
		{name: "cadvisor via nodes/metrics", path: "/metrics/cadvisor", token: "metrics", wantCode: 200},
		{name: "cadvisor refused", path: "/metrics/cadvisor", token: "stats", wantCode: 403,
			wantBody: "Forbidden (user=stats-reader, verb=get, resource=nodes, subresource(s)=[metrics])"},
		{name: "exec refused", method: "POST", path: "/exec/ns/p/c", token: "stats", wantCode: 403,
			wantBody: "Forbidden (user=stats-reader, verb=create, resource=nodes, subresource(s)=[proxy])"},
		{name: "containerLogs refused", path: "/containerLogs/ns/p/c", token: "stats", wantCode: 403,
			wantBody: "subresource(s)=[proxy]"},
		{name: "authorization error", mutate: func(c *Config) { c.Auth.Authz = grants{"error": true} }, path: "/pods", token: "admin",
			wantCode: 500, wantBody: "Authorization error (user=admin, verb=get, resource=nodes, subresource=pods)"},
		{name: "exec POST", method: "POST", path: "/exec/ns/p/c", token: "admin", wantCode: 200, wantBody: "POST ns/p//c"},
		{name: "exec GET with uid", path: "/exec/ns/p/u1/c", token: "admin", wantCode: 200, wantBody: "GET ns/p/u1/c"},
		{name: "exec PUT", method: "PUT", path: "/exec/ns/p/c", token: "admin", wantCode: 405},
		{name: "attach", path: "/attach/ns/p/c", token: "admin", wantCode: 200, wantBody: "GET ns/p//c"},
		{name: "portForward", method: "POST", path: "/portForward/ns/p", token: "admin", wantCode: 200, wantBody: "POST ns/p//"},
		{name: "portForward with uid", path: "/portForward/ns/p/u1", token: "admin", wantCode: 200, wantBody: "GET ns/p/u1/"},
		{name: "run", method: "POST", path: "/run/ns/p/u1/c", token: "admin", wantCode: 200, wantBody: "POST ns/p/u1/c"},
		{name: "run GET", path: "/run/ns/p/c", token: "admin", wantCode: 405},
		{name: "containerLogs", path: "/containerLogs/ns/p/c", token: "admin", wantCode: 200, wantBody: "GET ns/p//c"},
		{name: "configz", path: "/configz", token: "admin", wantCode: 200, wantBody: `{"kubeletconfig":{"port":10250}}`},
		{name: "runningpods", path: "/runningpods/", token: "admin", wantCode: 200, wantBody: `"name":"web"`},
		{name: "logs listing", path: "/logs/", token: "admin", wantCode: 200, wantBody: "syslog"},
		{name: "logs file", path: "/logs/syslog", token: "admin", wantCode: 200, wantBody: "boot ok"},
		{name: "logs symlink out of the directory", path: "/logs/escape", token: "admin", wantCode: 500},
		{name: "logs refused to stats reader", path: "/logs/syslog", token: "stats", wantCode: 403, wantBody: "subresource(s)=[log]"},
		{name: "pprof", path: "/debug/pprof/", token: "admin", wantCode: 200, wantBody: "goroutine"},
		{name: "pprof disabled", mutate: func(c *Config) { c.EnableProfilingHandler = false }, path: "/debug/pprof/heap", token: "admin",
			wantCode: 405, wantBody: "profiling endpoint is disabled."},
		{name: "logs disabled", mutate: func(c *Config) { c.EnableSystemLogHandler = false }, path: "/logs/syslog", token: "admin",
			wantCode: 405, wantBody: "logs endpoint is disabled."},
		{name: "logs query without enableSystemLogQuery: a plain file", path: "/logs/syslog?query=kubelet%3Bx", token: "admin", wantCode: 200, wantBody: "boot ok"},
		{name: "logs query", mutate: func(c *Config) { c.EnableSystemLogQuery = true }, path: "/logs/?query=kubelet%3Bx", token: "admin",
			wantCode: 406, wantBody: "input contains unsupported characters"},
		{name: "logs query: a file, through the file server", mutate: func(c *Config) { c.EnableSystemLogQuery = true }, path: "/logs/?query=./syslog", token: "admin",
			wantCode: 200, wantBody: "boot ok"},
		{name: "logs query refused to stats reader", mutate: func(c *Config) { c.EnableSystemLogQuery = true }, path: "/logs/?query=kubelet", token: "stats",
			wantCode: 403, wantBody: "subresource(s)=[log]"},
		{name: "debugging disabled: exec", mutate: noDebug, method: "POST", path: "/exec/ns/p/c", token: "admin", wantCode: 405, wantBody: "Debug endpoints are disabled."},
		{name: "debugging disabled: logs", mutate: noDebug, path: "/logs/syslog", token: "admin", wantCode: 405, wantBody: "Debug endpoints are disabled."},
		{name: "debugging disabled: pprof", mutate: noDebug, path: "/debug/pprof/", token: "admin", wantCode: 405},
		{name: "debugging disabled: configz gone", mutate: noDebug, path: "/configz", token: "admin", wantCode: 404},
		{name: "flags: PUT sets the verbosity", method: "PUT", path: "/debug/flags/v", body: "4", token: "admin", wantCode: 200, wantBody: "verbosity set to 4\n"},
		{name: "flags: setter error is 400", method: "PUT", path: "/debug/flags/v", body: "x", token: "admin", wantCode: 400, wantBody: `bad verbosity "x"`},
		{name: "flags: body too large", method: "PUT", path: "/debug/flags/v", body: strings.Repeat("4", maxFlagBody+1), token: "admin", wantCode: 400, wantBody: "error reading request body"},
		{name: "flags: GET is 406", path: "/debug/flags/v", token: "admin", wantCode: 406, wantBody: "unsupported http method"},
		{name: "flags: nodes/proxy update", method: "PUT", path: "/debug/flags/v", body: "4", token: "stats", wantCode: 403,
			wantBody: "Forbidden (user=stats-reader, verb=update, resource=nodes, subresource(s)=[proxy])"},
		{name: "flags: proxier may", method: "PUT", path: "/debug/flags/v", body: "4", token: "proxy", wantCode: 200},
		{name: "flags disabled", mutate: func(c *Config) { c.EnableDebugFlagsHandler = false }, method: "PUT", path: "/debug/flags/v", body: "4", token: "admin",
			wantCode: 405, wantBody: "flags endpoint is disabled."},
		{name: "debugging disabled: flags gone", mutate: noDebug, method: "PUT", path: "/debug/flags/v", body: "4", token: "admin", wantCode: 404},
		{name: "debugging disabled: pods stay", mutate: noDebug, path: "/pods", token: "admin", wantCode: 200},
		{name: "eviction explainer", path: "/debug/eviction", token: "admin", wantCode: 200, wantBody: `{"observed":true}`},
		{name: "eviction: no credentials", path: "/debug/eviction", wantCode: 401, wantBody: "Unauthorized"},
		{name: "eviction: nodes/proxy, as pprof", path: "/debug/eviction", token: "proxy", wantCode: 200, wantBody: `{"observed":true}`},
		{name: "eviction refused to stats reader", path: "/debug/eviction", token: "stats", wantCode: 403,
			wantBody: "Forbidden (user=stats-reader, verb=get, resource=nodes, subresource(s)=[proxy])"},
		{name: "pprof refused to stats reader alike", path: "/debug/pprof/", token: "stats", wantCode: 403,
			wantBody: "Forbidden (user=stats-reader, verb=get, resource=nodes, subresource(s)=[proxy])"},
		{name: "eviction POST", method: "POST", path: "/debug/eviction", token: "admin", wantCode: 405},
		{name: "debugging disabled: eviction", mutate: noDebug, path: "/debug/eviction", token: "admin", wantCode: 405,
			wantBody: "Debug endpoints are disabled."},
		{name: "debugging disabled: eviction still needs auth", mutate: noDebug, path: "/debug/eviction", wantCode: 401},
		{name: "no eviction manager: not served", mutate: func(c *Config) { c.Eviction = nil }, path: "/debug/eviction", token: "admin", wantCode: 404},
		{name: "timeline via nodes/pods", path: "/pods/ns/web/timeline", token: "pods", wantCode: 200, wantBody: `"pod":"ns/web"`},
		{name: "timeline via nodes/proxy", path: "/pods/ns/web/timeline", token: "proxy", wantCode: 200, wantBody: `"pod":"ns/web"`},
		{name: "timeline: no credentials", path: "/pods/ns/web/timeline", wantCode: 401, wantBody: "Unauthorized"},
		{name: "timeline refused as pods", path: "/pods/ns/web/timeline", token: "stats", wantCode: 403,
			wantBody: "Forbidden (user=stats-reader, verb=get, resource=nodes, subresource(s)=[pods proxy])"},
		{name: "timeline: unknown pod", path: "/pods/ns/nope/timeline", token: "pods", wantCode: 404, wantBody: `no start timeline for pod "ns/nope"`},
		{name: "timeline POST", method: "POST", path: "/pods/ns/web/timeline", token: "admin", wantCode: 405},
		{name: "timeline with debugging handlers off", mutate: noDebug, path: "/pods/ns/web/timeline", token: "pods", wantCode: 200},
		{name: "no recorder: /pods/ answers", mutate: func(c *Config) { c.Timeline = nil }, path: "/pods/ns/web/timeline", token: "pods", wantCode: 200,
			wantBody: `"kind":"PodList"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := testHandler(t, tc.mutate)
			method := tc.method
			if method == "" {
				method = http.MethodGet
			}
			r := httptest.NewRequest(method, tc.path, strings.NewReader(tc.body))
			if tc.token != "" {
				r.Header.Set("Authorization", "Bearer "+tc.token)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			if rec.Code != tc.wantCode || !strings.Contains(rec.Body.String(), tc.wantBody) {
				t.Errorf("%s %s: got %d %q, want %d containing %q", method, tc.path, rec.Code, rec.Body.String(), tc.wantCode, tc.wantBody)
			}
		})
	}
}

func TestReadOnlySubset(t *testing.T) {
	h := ReadOnlyHandler(func() error { return nil }, func() []corev1.Pod { return nil }, Handlers{Exec: echo, Stats: echo, Metrics: echo})
	for path, want := range map[string]int{"/healthz": 200, "/pods": 200, "/stats/summary": 200, "/metrics": 200,
		"/metrics/probes": 404, "/exec/ns/p/c": 404, "/configz": 404, "/logs/": 404} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != want {
			t.Errorf("GET %s = %d, want %d", path, rec.Code, want)
		}
	}
}

// TestFlagsHandlerNeedsSetter: the debug flags handler cannot be turned on
// without the function that sets the verbosity.
func TestFlagsHandlerNeedsSetter(t *testing.T) {
	cfg := Config{
		Health: func() error { return nil }, Pods: func() []corev1.Pod { return nil },
		RunningPods:             func(context.Context) (map[types.UID]*runtimestate.Pod, error) { return nil, nil },
		Auth:                    Auth{Authn: NewAuthenticator(AuthnConfig{}), Authz: grants{}, NodeName: "node-1"},
		EnableDebuggingHandlers: true, EnableDebugFlagsHandler: true,
	}
	if _, err := NewHandler(cfg); err == nil || !strings.Contains(err.Error(), "SetVerbosity is required") {
		t.Errorf("NewHandler without SetVerbosity: err = %v, want SetVerbosity is required", err)
	}
	cfg.EnableDebugFlagsHandler = false
	if _, err := NewHandler(cfg); err != nil {
		t.Errorf("NewHandler with the flags handler off: %v", err)
	}
}
