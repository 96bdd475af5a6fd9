package server

import (
	"fmt"
	"io"
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

// debugFlagPath is where the log verbosity is set (upstream's
// /debug/flags/v); maxFlagBody bounds the value read from the request.
const (
	debugFlagPath = "/debug/flags/v"
	maxFlagBody   = 1 << 10
)

// VerbositySetter sets the log verbosity from its text form and returns
// the answer for the client (component-base's logs.GlogSetter).
type VerbositySetter func(v string) (string, error)

// debugFlags serves PUT /debug/flags/v as upstream's StringFlagPutHandler,
// reading at most maxFlagBody bytes: the body is the new verbosity; other
// methods are answered 406.
func debugFlags(set VerbositySetter) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPut {
			plainText(w, http.StatusNotAcceptable, "unsupported http method")
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxFlagBody))
		if err != nil {
			plainText(w, http.StatusBadRequest, "error reading request body: "+err.Error())
			return
		}
		answer, err := set(string(body))
		if err != nil {
			plainText(w, http.StatusBadRequest, err.Error())
			return
		}
		plainText(w, http.StatusOK, answer)
	})
}

// plainText writes text as upstream's flag handler does.
func plainText(w http.ResponseWriter, code int, text string) {
	w.Header().Set("Content-Type", "text/plain")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	fmt.Fprintln(w, text)
}
