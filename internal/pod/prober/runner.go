package prober

import (
	"context"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/berthk8s/berth/internal/podkit/httpget"
)

// Recorder records events about a pod's containers.
type Recorder interface {
	ContainerEventf(pod *corev1.Pod, container, eventType, reason, messageFmt string, args ...any)
}

// Event reasons, as upstream.
const (
	EventUnhealthy    = "Unhealthy"
	EventProbeWarning = "ProbeWarning"
)

// maxRetries is how many times a handler that errs is run before giving up
// for this tick (upstream's maxProbeRetries).
const maxRetries = 3

// target is one probe run: the pod, the container spec, the instance and
// the pod IP the network handlers default to.
type target struct {
	pod         *corev1.Pod
	container   *corev1.Container
	containerID string
	podIP       string
}

// probeFunc runs a probe once (with retries on handler errors) and returns
// the result; an error means "no verdict": the worker throws it away.
type probeFunc func(ctx context.Context, t ProbeType, spec *corev1.Probe, tg target) (Result, error)

// runner runs the real handlers and records their events.
type runner struct {
	exec      ExecRuntime
	transport http.RoundTripper
	recorder  Recorder
	// userAgent is what HTTP and gRPC probes send.
	userAgent string
	// handler, when set, answers in place of the real handlers
	// (Config.Handler).
	handler Handler
}

func newRunner(exec ExecRuntime, rec Recorder, userAgent string) *runner {
	return &runner{exec: exec, transport: newTransport(), recorder: rec, userAgent: userAgent}
}

// probe is upstream's prober.probe: run the handler up to maxRetries times
// while it errs, then turn its outcome into a result with an event:
// Unhealthy for a failure or an error, ProbeWarning for a warning.
func (r *runner) probe(ctx context.Context, t ProbeType, spec *corev1.Probe, tg target) (Result, error) {
	var (
		o   outcome
		out string
		err error
	)
	for range maxRetries {
		if o, out, err = r.runOnce(ctx, t, spec, tg); err == nil {
			break
		}
	}
	name := tg.container.Name
	logger := klog.FromContext(ctx).WithValues("probeType", t, "pod", klog.KObj(tg.pod), "podUID", tg.pod.UID, "containerName", name)
	if err != nil {
		logger.V(1).Info("Probe errored", "err", err, "probeResult", o)
		r.recorder.ContainerEventf(tg.pod, name, corev1.EventTypeWarning, EventUnhealthy, "%s probe errored and resulted in %s state: %s", t, o, err)
		return Failure, err
	}
	switch o {
	case outcomeSuccess:
		logger.V(3).Info("Probe succeeded", "output", out)
		return Success, nil
	case outcomeWarning:
		r.recorder.ContainerEventf(tg.pod, name, corev1.EventTypeWarning, EventProbeWarning, "%s probe warning: %s", t, out)
		return Success, nil
	case outcomeFailure:
		logger.V(1).Info("Probe failed", "probeResult", o, "output", out)
		r.recorder.ContainerEventf(tg.pod, name, corev1.EventTypeWarning, EventUnhealthy, "%s probe failed: %s", t, out)
		return Failure, nil
	}
	r.recorder.ContainerEventf(tg.pod, name, corev1.EventTypeWarning, EventUnhealthy, "%s probe errored and resulted in %s state: %s", t, o, out)
	return Failure, nil
}

// runOnce asks Config.Handler when there is one, the probe's own
// handler otherwise.
func (r *runner) runOnce(ctx context.Context, t ProbeType, spec *corev1.Probe, tg target) (outcome, string, error) {
	if r.handler == nil {
		return r.run(ctx, spec, tg)
	}
	ok, out, err := r.handler(ctx, t, tg.pod, tg.container, tg.containerID)
	switch {
	case err != nil:
		return outcomeUnknown, "", err
	case ok:
		return outcomeSuccess, out, nil
	}
	return outcomeFailure, out, nil
}

// run calls the probe's handler once.
func (r *runner) run(ctx context.Context, spec *corev1.Probe, tg target) (outcome, string, error) {
	to := timeout(spec)
	h := &spec.ProbeHandler
	switch {
	case h.Exec != nil:
		cmd := expandStatic(h.Exec.Command, tg.container.Env)
		return execProbe(ctx, r.exec, tg.containerID, cmd, int64(to.Seconds()))
	case h.HTTPGet != nil:
		req, err := httpget.NewRequest(ctx, h.HTTPGet, tg.container, tg.podIP, r.userAgent)
		if err != nil {
			return outcomeUnknown, "", err
		}
		return httpProbe(r.transport, req, to)
	case h.TCPSocket != nil:
		port, err := httpget.ResolvePort(h.TCPSocket.Port, tg.container)
		if err != nil {
			return outcomeUnknown, "", err
		}
		host := h.TCPSocket.Host
		if host == "" {
			host = tg.podIP
		}
		return tcpProbe(ctx, host, port, to)
	case h.GRPC != nil:
		service := ""
		if h.GRPC.Service != nil {
			service = *h.GRPC.Service
		}
		return grpcProbe(ctx, tg.podIP, int(h.GRPC.Port), service, r.userAgent, to)
	}
	klog.FromContext(ctx).Info("Failed to find probe builder for container", "containerName", tg.container.Name)
	return outcomeUnknown, "", nil
}
