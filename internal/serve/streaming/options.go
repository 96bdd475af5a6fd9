package streaming

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// streamOptions are the streams an exec or attach asks for.
type streamOptions struct {
	Stdin, Stdout, Stderr, TTY bool
}

// parseStreamOptions reads the streams as the API server sends them
// (corev1.ExecStdinParam "input", "output", "error" and "tty"; "1" means
// yes), as upstream: stderr is dropped with a TTY, and at least one
// stream is required.
func parseStreamOptions(q url.Values) (streamOptions, error) {
	o := streamOptions{
		Stdin:  q.Get(corev1.ExecStdinParam) == "1",
		Stdout: q.Get(corev1.ExecStdoutParam) == "1",
		Stderr: q.Get(corev1.ExecStderrParam) == "1",
		TTY:    q.Get(corev1.ExecTTYParam) == "1",
	}
	if o.TTY && o.Stderr {
		o.Stderr = false
	}
	if !o.Stdin && !o.Stdout && !o.Stderr {
		return streamOptions{}, errors.New("you must specify at least 1 of stdin, stdout, stderr")
	}
	return o, nil
}

// parseRunCommand splits /run's cmd query at spaces, as upstream does.
func parseRunCommand(q url.Values) []string {
	return strings.Split(q.Get("cmd"), " ")
}

// parsePorts reads the "port" query values of a WebSocket port-forward
// request. SPDY requests name their ports in stream headers instead, so
// they have none here.
func parsePorts(r *http.Request) ([]int32, error) {
	if !isWebSocket(r) {
		return nil, nil
	}
	values := r.URL.Query()["port"]
	if len(values) == 0 {
		return nil, errors.New(`query parameter "port" is required`)
	}
	var ports []int32
	for _, v := range values {
		for _, s := range strings.Split(v, ",") {
			p, err := strconv.ParseUint(s, 10, 16)
			if err != nil {
				return nil, fmt.Errorf("unable to parse %q as a port: %w", s, err)
			}
			if p < 1 {
				return nil, fmt.Errorf("port %q must be > 0", s)
			}
			ports = append(ports, int32(p))
		}
	}
	return ports, nil
}

// isWebSocket reports whether r asks to upgrade to a WebSocket.
func isWebSocket(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket") &&
		headerHasToken(r.Header, "Connection", "upgrade")
}

func headerHasToken(h http.Header, key, token string) bool {
	for _, v := range h.Values(key) {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}
