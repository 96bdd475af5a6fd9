package server

import (
	"errors"
	"net/http"

	"github.com/berthk8s/berth/internal/serve/logquery"
)

// Handlers are the kubelet API endpoints other packages implement. A nil
// handler means the endpoint is not served (404). Handlers read the path
// wildcards {namespace}, {pod}, {uid} and {container} with r.PathValue.
type Handlers struct {
	ContainerLogs   http.Handler // GET /containerLogs/{namespace}/{pod}/{container}
	Exec            http.Handler // GET,POST /exec/{namespace}/{pod}/{container} and /exec/{namespace}/{pod}/{uid}/{container}
	Attach          http.Handler // same shapes under /attach/
	PortForward     http.Handler // GET,POST /portForward/{namespace}/{pod} and /portForward/{namespace}/{pod}/{uid}
	Run             http.Handler // POST /run/{namespace}/{pod}/{container} and /run/{namespace}/{pod}/{uid}/{container}
	Stats           http.Handler // /stats/ and below
	Metrics         http.Handler // GET /metrics
	MetricsProbes   http.Handler // GET /metrics/probes
	MetricsResource http.Handler // GET /metrics/resource
	MetricsCadvisor http.Handler // GET /metrics/cadvisor
}

// Config is the kubelet API server's content.
type Config struct {
	Health      HealthFunc
	Pods        PodsFunc
	RunningPods RunningPodsFunc
	// Configz is what /configz serves under "kubeletconfig".
	Configz  any
	Handlers Handlers
	// Auth authenticates and authorizes every request.
	Auth Auth
	// The KubeletConfiguration switches, as upstream: with debugging
	// handlers off, logs, exec, attach, portForward, run, containerLogs,
	// runningpods, configz, /logs/, pprof and berth's /debug/eviction are
	// refused with 405.
	EnableDebuggingHandlers bool
	EnableSystemLogHandler  bool
	EnableProfilingHandler  bool
	// EnableDebugFlagsHandler serves PUT /debug/flags/v (with debugging
	// handlers), which sets the log verbosity through SetVerbosity.
	EnableDebugFlagsHandler bool
	SetVerbosity            VerbositySetter
	// LogDir is what /logs/ serves (upstream: /var/log).
	LogDir string
	// EnableSystemLogQuery (with the system log handler) makes /logs/
	// answer node log queries (internal/serve/logquery).
	EnableSystemLogQuery bool
	// Eviction serves the eviction explainer, GET /debug/eviction (with
	// debugging handlers; nil: not served).
	Eviction EvictionFunc
	// Timeline serves pods' start timelines, GET
	// /pods/{namespace}/{pod}/timeline (nil: not served). Not on the
	// read-only port.
	Timeline TimelineFunc
}

// NewHandler returns the kubelet API handler: every endpoint behind
// authentication and authorization.
func NewHandler(cfg Config) (http.Handler, error) {
	if cfg.Health == nil || cfg.Pods == nil || cfg.RunningPods == nil {
		return nil, errors.New("create kubelet API handler: Health, Pods and RunningPods are required")
	}
	if cfg.Auth.Authn == nil || cfg.Auth.Authz == nil || cfg.Auth.NodeName == "" {
		return nil, errors.New("create kubelet API handler: an authenticator, an authorizer and the node name are required")
	}
	if cfg.EnableDebugFlagsHandler && cfg.SetVerbosity == nil {
		return nil, errors.New("create kubelet API handler: SetVerbosity is required with the debug flags handler")
	}
	mux := http.NewServeMux()
	handle := func(pattern string, h http.Handler) {
		if h != nil {
			mux.Handle(pattern, h)
		}
	}
	registerDefault(handle, cfg.Health, cfg.Pods, cfg.Handlers)
	if cfg.Timeline != nil {
		handle(timelinePath, podTimeline(cfg.Timeline))
	}
	if cfg.EnableDebuggingHandlers {
		registerDebugging(handle, cfg)
	} else {
		off := disabled("Debug endpoints are disabled.")
		for _, p := range []string{"/run/", "/exec/", "/attach/", "/portForward/", "/containerLogs/", "/runningpods/", "/debug/pprof/", "/logs/", evictionPath} {
			handle(p, off)
		}
	}
	return withAuth(cfg.Auth, mux), nil
}

// ReadOnlyHandler serves the read-only port: upstream's default handlers
// (/healthz, /pods, /stats/, /metrics*) without authentication.
func ReadOnlyHandler(check HealthFunc, list PodsFunc, h Handlers) http.Handler {
	mux := http.NewServeMux()
	registerDefault(func(pattern string, h http.Handler) {
		if h != nil {
			mux.Handle(pattern, h)
		}
	}, check, list, h)
	return mux
}

// registerDefault registers upstream's default handlers.
func registerDefault(handle func(string, http.Handler), check HealthFunc, list PodsFunc, h Handlers) {
	handle("/healthz", healthz(check))
	handle("GET /healthz/ping", healthz(func() error { return nil }))
	handle("GET /healthz/log", healthz(func() error { return nil }))
	handle("GET /healthz/syncloop", healthz(check))
	handle("/pods", pods(list))
	handle("/pods/", pods(list))
	handle("/stats/", h.Stats)
	handle("GET /metrics", h.Metrics)
	handle("GET /metrics/probes", h.MetricsProbes)
	handle("GET /metrics/resource", h.MetricsResource)
	handle("GET /metrics/cadvisor", h.MetricsCadvisor)
}

// registerDebugging registers the debugging handlers, as upstream's
// InstallDebuggingHandlers, InstallSystemLogHandler,
// InstallProfilingHandler and InstallDebugFlagsHandler, and berth's
// eviction explainer.
func registerDebugging(handle func(string, http.Handler), cfg Config) {
	h := cfg.Handlers
	for _, method := range []string{"GET ", "POST "} {
		handle(method+"/exec/{namespace}/{pod}/{container}", h.Exec)
		handle(method+"/exec/{namespace}/{pod}/{uid}/{container}", h.Exec)
		handle(method+"/attach/{namespace}/{pod}/{container}", h.Attach)
		handle(method+"/attach/{namespace}/{pod}/{uid}/{container}", h.Attach)
		handle(method+"/portForward/{namespace}/{pod}", h.PortForward)
		handle(method+"/portForward/{namespace}/{pod}/{uid}", h.PortForward)
	}
	handle("POST /run/{namespace}/{pod}/{container}", h.Run)
	handle("POST /run/{namespace}/{pod}/{uid}/{container}", h.Run)
	handle("GET /containerLogs/{namespace}/{pod}/{container}", h.ContainerLogs)
	handle("GET /configz", configz(cfg.Configz))
	handle("GET /runningpods/", runningPods(cfg.RunningPods))
	if cfg.EnableSystemLogHandler {
		logs := systemLogs(cfg.LogDir)
		if cfg.EnableSystemLogQuery {
			logs = logquery.Handler(logquery.Config{Dir: cfg.LogDir, Files: logs})
		}
		handle("/logs/", logs)
	} else {
		handle("/logs/", disabled("logs endpoint is disabled."))
	}
	if cfg.EnableProfilingHandler {
		registerPprof(handle)
	} else {
		handle("/debug/pprof/", disabled("profiling endpoint is disabled."))
	}
	if cfg.Eviction != nil {
		handle("GET "+evictionPath, evictionExplainer(cfg.Eviction))
	}
	if cfg.EnableDebugFlagsHandler {
		handle(debugFlagPath, debugFlags(cfg.SetVerbosity))
	} else {
		handle(debugFlagPath, disabled("flags endpoint is disabled."))
	}
}
