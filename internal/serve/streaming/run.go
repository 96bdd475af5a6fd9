package streaming

import (
	"fmt"
	"net/http"
	"strings"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
)

// Run serves POST /run/{namespace}/{pod}[/{uid}]/{container}?cmd=...: it
// runs the command through ExecSync and answers stdout then stderr. A
// non-zero exit answers 500 with the exit code and stderr, as upstream.
func (s *Server) Run() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t, err := s.findContainer(r)
		if err != nil {
			writeError(w, r, err)
			return
		}
		cmd := parseRunCommand(r.URL.Query())
		resp, err := s.cfg.Runtime.ExecSync(r.Context(), &runtimeapi.ExecSyncRequest{ContainerId: t.containerID, Cmd: cmd})
		if err != nil {
			writeError(w, r, fmt.Errorf("run %q in container %q: %w", cmd, t.containerID, err))
			return
		}
		if code := resp.GetExitCode(); code != 0 {
			writeError(w, r, fmt.Errorf("command '%s' exited with %d: %s", strings.Join(cmd, " "), code, resp.GetStderr()))
			return
		}
		out := append(resp.GetStdout(), resp.GetStderr()...)
		if len(out) == 0 {
			w.WriteHeader(http.StatusOK)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		if _, err := w.Write(out); err != nil {
			klog.FromContext(r.Context()).V(2).Info("Failed to write run output", "err", err)
		}
	})
}

// containerTTY returns the tty setting of the named container in spec.
func containerTTY(spec corev1.PodSpec, name string) (bool, bool) {
	for _, c := range spec.Containers {
		if c.Name == name {
			return c.TTY, true
		}
	}
	for _, c := range spec.InitContainers {
		if c.Name == name {
			return c.TTY, true
		}
	}
	for _, c := range spec.EphemeralContainers {
		if c.Name == name {
			return c.TTY, true
		}
	}
	return false, false
}
