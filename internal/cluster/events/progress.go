package events

import (
	"encoding/json"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

// ProgressInterval is the least time between two writes of a progress
// event.
const ProgressInterval = 5 * time.Second

// progressCacheSize bounds the progress events remembered for their next
// occurrence, as client-go's correlator bounds its cache.
const progressCacheSize = 4096

// Progress is one event whose message a long operation updates while it
// runs (an image pull: "Pulling image "x": 12.3 MiB of 40.1 MiB (30%),
// 2.1 MiB/s"): one Event object, created by StartProgress with
// the operation's first message, then its message, count and
// lastTimestamp patched, at most once per ProgressInterval, the latest
// message winning. A second operation with the same first message on the
// same object (a pull retried) counts on the same Event, as client-go's
// correlator counts repeated events. Update and Close never block; one
// goroutine owned by the Progress writes to the API server until Close.
type Progress struct {
	r    *Recorder
	log  klog.Logger
	wake chan struct{}
	// mu guards msg and closed.
	mu     sync.Mutex
	msg    string
	closed bool
}

// progressKey identifies a progress event for its next occurrence.
type progressKey struct {
	uid       types.UID
	fieldPath string
	reason    string
	message   string
}

// progressSeen is what the cache keeps of a progress event.
type progressSeen struct {
	name, namespace string
	count           int32
}

// StartProgress records the first event of an operation on a container of
// pod (on the pod for ""), whose message Update replaces later. Without an
// API client (or a clock) it is a plain event, and updates are only
// logged at V(4).
func (r *Recorder) StartProgress(pod *corev1.Pod, container, eventType, reason, msg string) *Progress {
	p := &Progress{r: r, wake: make(chan struct{}, 1), msg: msg}
	p.log = r.logger.WithValues("pod", klog.KObj(pod), "container", container, "reason", reason)
	if !r.sending() || r.clock == nil || pod == nil {
		if container == "" {
			r.Eventf(pod, eventType, reason, "%s", msg)
		} else {
			r.ContainerEventf(pod, container, eventType, reason, "%s", msg)
		}
		p.closed = true
		return p
	}
	r.log(eventType, "pod", klog.KObj(pod), "container", container, "reason", reason, "message", msg)
	ref, err := podRef(pod)
	if container != "" {
		ref, err = containerRef(pod, container)
	}
	if err != nil {
		p.log.Error(err, "Not sending event")
		p.closed = true
		return p
	}
	ev := r.newEvent(ref, eventType, reason, msg)
	go p.run(ev, progressKey{uid: pod.UID, fieldPath: ref.FieldPath, reason: reason, message: msg})
	return p
}

// Update replaces the event's message.
func (p *Progress) Update(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.log.V(4).Info("Progress", "message", msg)
	if p.closed || msg == p.msg {
		return
	}
	p.msg = msg
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Close ends the operation: its latest message is still written, then the
// goroutine ends. Safe to call more than once.
func (p *Progress) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.closed = true
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// latest returns the message to write and whether the operation ended.
func (p *Progress) latest() (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.msg, p.closed
}

// run writes the event: created (or counted on the cached one), then
// patched with each new message, ProgressInterval apart, until Close.
func (p *Progress) run(ev *corev1.Event, key progressKey) {
	written := ev.Message
	if !p.r.createProgress(ev, key) {
		return
	}
	for {
		select {
		case <-p.wake:
		case <-p.r.ctxDone:
			return
		case <-p.r.stopped:
			return
		}
		msg, closed := p.latest()
		if msg != written {
			ev.Message, ev.Count, ev.LastTimestamp = msg, ev.Count+1, metav1.NewTime(p.r.clock.Now())
			// Counted before the write, so that a next occurrence
			// counts on from it however soon it comes.
			p.r.progressSeen.Add(key, progressSeen{name: ev.Name, namespace: ev.Namespace, count: ev.Count})
			if !p.r.patchProgress(ev) {
				p.r.progressSeen.Remove(key)
				return
			}
			written = msg
		}
		if closed {
			return
		}
		select {
		case <-p.r.clock.After(ProgressInterval):
		case <-p.r.ctxDone:
			return
		case <-p.r.stopped:
			return
		}
	}
}

// newEvent builds an event about ref as client-go's recorder does
// (makeEvent): named after the object and the time, count 1.
func (r *Recorder) newEvent(ref *corev1.ObjectReference, eventType, reason, msg string) *corev1.Event {
	now := metav1.NewTime(r.clock.Now())
	return &corev1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: fmt.Sprintf("%v.%x", ref.Name, now.UnixNano()), Namespace: ref.Namespace},
		InvolvedObject:      *ref,
		Reason:              reason,
		Message:             msg,
		FirstTimestamp:      now,
		LastTimestamp:       now,
		Count:               1,
		Type:                eventType,
		Source:              corev1.EventSource{Component: Component, Host: r.nodeName},
		ReportingController: Component,
		ReportingInstance:   r.nodeName,
	}
}

// createProgress writes a progress event's first message: on the cached
// event of an earlier occurrence, its count one more, if the API still has
// it; else as a new event. It reports whether the event exists.
func (r *Recorder) createProgress(ev *corev1.Event, key progressKey) bool {
	if v, ok := r.progressSeen.Get(key); ok {
		seen := v.(progressSeen)
		prev := *ev
		prev.Name, prev.Namespace, prev.Count = seen.name, seen.namespace, seen.count+1
		r.progressSeen.Add(key, progressSeen{name: prev.Name, namespace: prev.Namespace, count: prev.Count})
		if r.patchProgress(&prev) {
			*ev = prev
			return true
		}
		r.progressSeen.Remove(key)
	}
	got, err := r.sink.Create(ev)
	if err != nil {
		r.logger.Error(err, "Cannot write event", "event", klog.KObj(ev), "reason", ev.Reason)
		return false
	}
	ev.Name, ev.Namespace = got.Name, got.Namespace
	r.progressSeen.Add(key, progressSeen{name: ev.Name, namespace: ev.Namespace, count: ev.Count})
	return true
}

// patchProgress writes ev's message, count and lastTimestamp to the event
// of its name, as the correlator patches a repeated event. It reports
// whether the API took it; an event gone (its TTL passed) is forgotten.
func (r *Recorder) patchProgress(ev *corev1.Event) bool {
	data, err := json.Marshal(map[string]any{"message": ev.Message, "count": ev.Count, "lastTimestamp": ev.LastTimestamp})
	if err == nil {
		_, err = r.sink.Patch(ev, data)
	}
	if err != nil {
		if !apierrors.IsNotFound(err) {
			r.logger.Error(err, "Cannot update event", "event", klog.KObj(ev), "reason", ev.Reason)
		}
		return false
	}
	return true
}
