package events

import (
	"context"
	"errors"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/lru"
)

// Component is the event source's component, as upstream's kubelet names
// itself: kubectl describe shows it in the From column.
const Component = "kubelet"

// Config is what New needs.
type Config struct {
	// Client sends events to the API server. Nil in standalone mode: events
	// are then only logged.
	Client kubernetes.Interface
	// NodeName is the event source's host and the name of the node that
	// NodeEventf records against. Required.
	NodeName string
	// QPS and Burst bound the event writes to the API server
	// (KubeletConfiguration eventRecordQPS and eventBurst). 0 takes
	// client-go's defaults (5 and 10), as upstream's event client does; a
	// negative QPS means no limit.
	QPS   float32
	Burst int
	// Logger receives every event. Zero: the logger of New's context.
	Logger klog.Logger
	// Clock times progress events (StartContainerProgress); nil makes them
	// plain events.
	Clock clock.WithTicker
}

// Recorder records events. It is safe for concurrent use. With an API client
// it owns one goroutine, the broadcaster's, until Shutdown or until the
// context given to New ends.
type Recorder struct {
	logger   klog.Logger
	nodeName string

	// Nil in standalone mode.
	broadcaster record.EventBroadcaster
	recorder    record.EventRecorderLogger
	// sink writes progress events, which bypass the broadcaster: they
	// share its token bucket. clock times them; progressSeen remembers
	// them for their next occurrence (progress.go).
	sink         *limitedSink
	clock        clock.WithTicker
	progressSeen *lru.Cache

	// ctxDone is New's context's Done channel, stopped is closed by
	// Shutdown: after either, events are only logged, since the broadcaster
	// refuses them.
	ctxDone  <-chan struct{}
	stopped  chan struct{}
	shutdown sync.Once
}

// New returns a Recorder. With cfg.Client it starts client-go's event
// broadcaster, which stops when ctx ends or at Shutdown.
func New(ctx context.Context, cfg Config) (*Recorder, error) {
	if cfg.NodeName == "" {
		return nil, errors.New("events: NodeName is required")
	}
	logger := cfg.Logger
	if logger.GetSink() == nil {
		logger = klog.FromContext(ctx)
	}
	r := &Recorder{logger: logger, nodeName: cfg.NodeName, ctxDone: ctx.Done(), stopped: make(chan struct{}),
		clock: cfg.Clock, progressSeen: lru.New(progressCacheSize)}
	if cfg.Client == nil {
		logger.Info("No API server client: events are only logged")
		return r, nil
	}
	sink := &limitedSink{sink: &typedcorev1.EventSinkImpl{Interface: cfg.Client.CoreV1().Events("")}}
	if fill, size, ok := limits(cfg.QPS, cfg.Burst); ok {
		sink.limiter = flowcontrol.NewTokenBucketRateLimiter(fill, size)
	}
	r.sink = sink
	r.broadcaster = record.NewBroadcaster(record.WithContext(klog.NewContext(ctx, logger)))
	r.broadcaster.StartRecordingToSink(sink)
	r.recorder = r.broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: Component, Host: cfg.NodeName}).
		WithLogger(logger)
	logger.V(4).Info("Sending events to the API server")
	return r, nil
}

// Shutdown stops sending events to the API server; events still queued are
// lost. Later events are only logged. Safe to call more than once.
func (r *Recorder) Shutdown() {
	r.shutdown.Do(func() {
		close(r.stopped)
		if r.broadcaster != nil {
			r.broadcaster.Shutdown()
		}
	})
}

// Eventf records an event about pod. Its signature is kuberuntime.Recorder's.
func (r *Recorder) Eventf(pod *corev1.Pod, eventType, reason, messageFmt string, args ...any) {
	msg := fmt.Sprintf(messageFmt, args...)
	if pod == nil {
		r.log(eventType, "reason", reason, "message", msg)
		return
	}
	r.log(eventType, "pod", klog.KObj(pod), "reason", reason, "message", msg)
	if !r.sending() {
		return
	}
	ref, err := podRef(pod)
	if err != nil {
		r.logger.Error(err, "Not sending event", "pod", klog.KObj(pod), "reason", reason)
		return
	}
	r.recorder.Event(ref, eventType, reason, msg)
}

// ContainerEventf records an event about a container of pod: its
// involvedObject is the pod with fieldPath spec.containers{name} (or
// spec.initContainers{name}, spec.ephemeralContainers{name}). An event about
// a container the pod's spec does not name is only logged, as upstream
// drops it.
func (r *Recorder) ContainerEventf(pod *corev1.Pod, container string, eventType, reason, messageFmt string, args ...any) {
	msg := fmt.Sprintf(messageFmt, args...)
	if pod == nil {
		r.log(eventType, "container", container, "reason", reason, "message", msg)
		return
	}
	r.log(eventType, "pod", klog.KObj(pod), "container", container, "reason", reason, "message", msg)
	if !r.sending() {
		return
	}
	ref, err := containerRef(pod, container)
	if err != nil {
		r.logger.Error(err, "Not sending event", "pod", klog.KObj(pod), "reason", reason)
		return
	}
	r.recorder.Event(ref, eventType, reason, msg)
}

// NodeEventf records an event about the node: kind Node, the node's name,
// and the name as its UID, as upstream's kubelet builds its node reference.
func (r *Recorder) NodeEventf(eventType, reason, messageFmt string, args ...any) {
	msg := fmt.Sprintf(messageFmt, args...)
	r.log(eventType, "node", klog.KRef("", r.nodeName), "reason", reason, "message", msg)
	if !r.sending() {
		return
	}
	r.recorder.Event(nodeRef(r.nodeName), eventType, reason, msg)
}

// sending reports whether events go to the API server.
func (r *Recorder) sending() bool {
	if r.recorder == nil {
		return false
	}
	select {
	case <-r.ctxDone:
		return false
	case <-r.stopped:
		return false
	default:
		return true
	}
}

// log writes an event to the log: Warning events at the default verbosity,
// others at V(1).
func (r *Recorder) log(eventType string, kv ...any) {
	kv = append([]any{"type", eventType}, kv...)
	if eventType == corev1.EventTypeWarning {
		r.logger.Info("Warning event", kv...)
		return
	}
	r.logger.V(1).Info("Event", kv...)
}
