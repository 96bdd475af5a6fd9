package server

import (
	"net/http"
	"net/http/pprof"
)

// registerPprof serves Go's profiles under /debug/pprof/.
func registerPprof(register func(pattern string, h http.Handler)) {
	register("/debug/pprof/", http.HandlerFunc(pprof.Index))
	register("/debug/pprof/cmdline", http.HandlerFunc(pprof.Cmdline))
	register("/debug/pprof/profile", http.HandlerFunc(pprof.Profile))
	register("/debug/pprof/symbol", http.HandlerFunc(pprof.Symbol))
	register("/debug/pprof/trace", http.HandlerFunc(pprof.Trace))
}

// disabled answers 405 with msg, as upstream answers disabled endpoints.
func disabled(msg string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, msg, http.StatusMethodNotAllowed)
	})
}
