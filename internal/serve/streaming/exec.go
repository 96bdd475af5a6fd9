package streaming

import (
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Exec serves /exec/{namespace}/{pod}[/{uid}]/{container}?command=...
func (s *Server) Exec() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		opts, err := parseStreamOptions(r.URL.Query())
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		t, err := s.findContainer(r)
		if err != nil {
			writeError(w, r, err)
			return
		}
		resp, err := s.cfg.Runtime.Exec(r.Context(), &runtimeapi.ExecRequest{
			ContainerId: t.containerID, Cmd: r.URL.Query()[corev1.ExecCommandParam],
			Stdin: opts.Stdin, Stdout: opts.Stdout, Stderr: opts.Stderr, Tty: opts.TTY,
		})
		if err != nil {
			writeError(w, r, fmt.Errorf("exec in container %q: %w", t.containerID, err))
			return
		}
		s.proxyTo(w, r, resp.GetUrl())
	})
}

// Attach serves /attach/{namespace}/{pod}[/{uid}]/{container}. The TTY is
// the container's own (it cannot change after start).
func (s *Server) Attach() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		opts, err := parseStreamOptions(r.URL.Query())
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		t, err := s.findContainer(r)
		if err != nil {
			writeError(w, r, err)
			return
		}
		tty, ok := containerTTY(t.pod.Spec, r.PathValue("container"))
		if !ok {
			writeError(w, r, notFound("container %s not found in pod %s_%s", r.PathValue("container"), t.pod.Name, t.pod.Namespace))
			return
		}
		resp, err := s.cfg.Runtime.Attach(r.Context(), &runtimeapi.AttachRequest{
			ContainerId: t.containerID,
			Stdin:       opts.Stdin, Stdout: opts.Stdout, Stderr: opts.Stderr, Tty: tty,
		})
		if err != nil {
			writeError(w, r, fmt.Errorf("attach to container %q: %w", t.containerID, err))
			return
		}
		s.proxyTo(w, r, resp.GetUrl())
	})
}

// PortForward serves /portForward/{namespace}/{pod}[/{uid}].
func (s *Server) PortForward() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ports, err := parsePorts(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		pod, err := s.findPod(r)
		if err != nil {
			writeError(w, r, err)
			return
		}
		sb := s.cfg.RuntimePod(pod.UID).LatestSandbox()
		if sb == nil {
			writeError(w, r, notFound("pod not found (%q)", pod.Name+"_"+pod.Namespace))
			return
		}
		resp, err := s.cfg.Runtime.PortForward(r.Context(), &runtimeapi.PortForwardRequest{PodSandboxId: sb.ID, Port: ports})
		if err != nil {
			writeError(w, r, fmt.Errorf("port-forward to sandbox %q: %w", sb.ID, err))
			return
		}
		s.proxyTo(w, r, resp.GetUrl())
	})
}
