package kuberuntime

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"

	"github.com/berthk8s/berth/internal/podkit/httpget"
	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// HTTPDoer sends the requests of httpGet lifecycle hooks. Declared here, by
// its consumer; *http.Client satisfies it.
type HTTPDoer interface {
	Do(req *http.Request) (*http.Response, error)
}

// Hook failure reasons and messages, as upstream records them.
const (
	eventFailedPostStartHook = "FailedPostStartHook"
	eventFailedPreStopHook   = "FailedPreStopHook"
	eventLifecycleHTTPFallbk = "LifecycleHTTPFallback"
	// ReasonPostStartHookError is the waiting reason of a container whose
	// postStart hook failed (upstream ErrPostStartHook).
	ReasonPostStartHookError = "PostStartHookError"
	// killReasonFailedPostStartHook is the Killing event message of a
	// container killed for its failed postStart hook.
	killReasonFailedPostStartHook = "FailedPostStartHook"
	msgPreStopHookFailed          = "PreStopHook failed"
	// maxHookRespBody is how much of a hook's HTTP response is drained
	// (upstream maxRespBodyLength, 10 KiB).
	maxHookRespBody = 10 * 1024
)

// hookTarget is one running container a hook runs for.
type hookTarget struct {
	Pod         *corev1.Pod
	Container   *corev1.Container
	ContainerID string
	// PodIPs are the pod's IPs, primary first: the default host of an
	// httpGet hook.
	PodIPs []string
}

// runHook runs one lifecycle handler (upstream handlerRunner.Run). On
// failure it returns upstream's message along with the error; the message
// is "" on success.
func (m *Manager) runHook(ctx context.Context, t hookTarget, h *corev1.LifecycleHandler) (string, error) {
	logger := klog.FromContext(ctx)
	switch {
	case h.Exec != nil:
		out, err := m.execHook(ctx, t.ContainerID, h.Exec.Command)
		if err == nil {
			return "", nil
		}
		logger.V(1).Info("Exec lifecycle hook for Container in Pod failed", "execCommand", h.Exec.Command,
			"containerName", t.Container.Name, "err", err)
		return fmt.Sprintf("Exec lifecycle hook (%v) for Container %q in Pod %q failed - error: %v, message: %q",
			h.Exec.Command, t.Container.Name, podutil.Desc(t.Pod), err, string(out)), err
	case h.HTTPGet != nil:
		err := m.httpHook(ctx, t, h.HTTPGet)
		if err == nil {
			return "", nil
		}
		logger.V(1).Info("HTTP lifecycle hook for Container in Pod failed", "path", h.HTTPGet.Path,
			"containerName", t.Container.Name, "err", err)
		return fmt.Sprintf("HTTP lifecycle hook (%s) for Container %q in Pod %q failed - error: %v",
			h.HTTPGet.Path, t.Container.Name, podutil.Desc(t.Pod), err), err
	case h.Sleep != nil:
		err := m.sleepHook(ctx, h.Sleep.Seconds)
		if err == nil {
			return "", nil
		}
		return fmt.Sprintf("Sleep lifecycle hook (%d) for Container %q in Pod %q failed - error: %v",
			h.Sleep.Seconds, t.Container.Name, podutil.Desc(t.Pod), err), err
	}
	err := fmt.Errorf("invalid handler: %v", h)
	return fmt.Sprintf("Cannot run handler: %v", err), err
}

// execHook runs the command in the container through ExecSync, without a
// timeout (as upstream), and returns stdout followed by stderr. A non-zero
// exit code is an error carrying stderr, as upstream's CRI client words it.
func (m *Manager) execHook(ctx context.Context, containerID string, cmd []string) ([]byte, error) {
	resp, err := m.cfg.Runtime.ExecSync(ctx, &runtimeapi.ExecSyncRequest{ContainerId: containerID, Cmd: cmd})
	if err != nil {
		return nil, fmt.Errorf("exec in container %q: %w", containerID, err)
	}
	out := append(append([]byte{}, resp.GetStdout()...), resp.GetStderr()...)
	if code := resp.GetExitCode(); code != 0 {
		return out, fmt.Errorf("command '%s' exited with %d: %s", strings.Join(cmd, " "), code, resp.GetStderr())
	}
	return out, nil
}

// sleepHook waits for the given seconds, or fails when ctx ends first.
func (m *Manager) sleepHook(ctx context.Context, seconds int64) error {
	select {
	case <-ctx.Done():
		return errors.New("container terminated before sleep hook finished")
	case <-m.cfg.Clock.After(time.Duration(seconds) * time.Second):
		return nil
	}
}

// httpHook sends the hook's GET, built by httpget as upstream builds it
// for hooks and probes alike; unlike a probe, a hook needs the pod's IP
// unless the action names a host. Any response is a success (upstream does
// not look at the status code); an HTTPS request answered in plain HTTP is
// retried over HTTP, as upstream does, with a LifecycleHTTPFallback event.
func (m *Manager) httpHook(ctx context.Context, t hookTarget, a *corev1.HTTPGetAction) error {
	podIP := ""
	if len(t.PodIPs) > 0 {
		podIP = t.PodIPs[0]
	}
	if a.Host == "" && podIP == "" {
		return errors.New("failed to find networking container: the pod has no IP")
	}
	req, err := httpget.NewRequest(ctx, a, t.Container, podIP, m.hookUserAgent)
	if err != nil {
		return err
	}
	resp, err := m.hookHTTP.Do(req)
	drain(resp)
	var uerr *url.Error
	if err != nil && errors.As(err, &uerr) && strings.Contains(uerr.Err.Error(), "server gave HTTP response to HTTPS client") {
		retry := req.Clone(ctx)
		retry.URL.Scheme = "http"
		retry.Header.Del("Authorization")
		resp, herr := m.hookHTTP.Do(retry)
		drain(resp)
		if herr == nil {
			m.cfg.Recorder.Eventf(t.Pod, corev1.EventTypeWarning, eventLifecycleHTTPFallbk,
				"request to HTTPS lifecycle hook %s got HTTP response, retry with HTTP succeeded", retry.URL.Host)
			return nil
		}
	}
	return err
}

func drain(resp *http.Response) {
	if resp == nil {
		return
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxHookRespBody))
}

// defaultHookHTTP is the client of httpGet hooks when none is configured:
// HTTPS without certificate checks (upstream lifecycle hooks do not verify
// the pod's certificate) and no connection reuse.
func defaultHookHTTP() *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:             http.ProxyFromEnvironment,
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // as upstream's hook client
		DisableKeepAlives: true,
	}}
}
