package events

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/flowcontrol"
)

// limitedSink bounds the writes of the broadcaster's goroutine to the API
// server. It blocks that goroutine while the bucket is empty; the
// broadcaster's queue drops events beyond it meanwhile.
type limitedSink struct {
	sink    record.EventSink
	limiter flowcontrol.RateLimiter // nil: no limit
}

var _ record.EventSink = (*limitedSink)(nil)

func (s *limitedSink) wait() {
	if s.limiter != nil {
		s.limiter.Accept()
	}
}

func (s *limitedSink) Create(event *corev1.Event) (*corev1.Event, error) {
	s.wait()
	return s.sink.Create(event)
}

func (s *limitedSink) Update(event *corev1.Event) (*corev1.Event, error) {
	s.wait()
	return s.sink.Update(event)
}

func (s *limitedSink) Patch(event *corev1.Event, data []byte) (*corev1.Event, error) {
	s.wait()
	return s.sink.Patch(event, data)
}

// limits returns the token bucket's fill rate and size for the configured
// eventRecordQPS and eventBurst, as client-go's REST client reads them for
// upstream's event client: 0 takes the client defaults (5 and 10), a
// negative QPS means no limit (ok false).
func limits(qps float32, burst int) (fill float32, size int, ok bool) {
	if qps == 0 {
		qps = rest.DefaultQPS
	}
	if burst == 0 {
		burst = rest.DefaultBurst
	}
	if qps < 0 {
		return 0, 0, false
	}
	return qps, burst, true
}
