package podsapi

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// alpha is the prefix component-base gives the help of an ALPHA metric.
const alpha = "[ALPHA] "

// metricHelp are upstream's names and help.
var metricHelp = map[string]string{
	"pod_watch_events_dropped_total": "Cumulative number of pod watch events dropped.",
	"pod_requests_total":             "Cumulative number of requests to the PodsAPI endpoint. Broken down by server api version and status code.",
	"pod_requests_list_total":        "Number of requests to the PodsAPI List endpoint. Broken down by server api version and status code.",
	"pod_requests_get_total":         "Number of requests to the PodsAPI Get endpoint. Broken down by server api version and status code.",
	"pod_requests_watch_total":       "Number of requests to the PodsAPI Watch endpoint. Broken down by server api version and status code.",
}

var requestLabels = []string{"server_api_version", "status_code"}

// apiMetrics are upstream's Pods API metrics.
type apiMetrics struct {
	watchDropped            prometheus.Counter
	total, list, get, watch *prometheus.CounterVec
}

func newRequests(name string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: "kubelet", Name: name, Help: alpha + metricHelp[name]}, requestLabels)
}

func newAPIMetrics(reg prometheus.Registerer) (*apiMetrics, error) {
	m := &apiMetrics{
		watchDropped: prometheus.NewCounter(prometheus.CounterOpts{
			Subsystem: "kubelet", Name: "pod_watch_events_dropped_total", Help: alpha + metricHelp["pod_watch_events_dropped_total"],
		}),
		total: newRequests("pod_requests_total"),
		list:  newRequests("pod_requests_list_total"),
		get:   newRequests("pod_requests_get_total"),
		watch: newRequests("pod_requests_watch_total"),
	}
	for _, c := range []prometheus.Collector{m.watchDropped, m.total, m.list, m.get, m.watch} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register pods API metrics: %w", err)
		}
	}
	return m, nil
}

// statusCode is the status_code label of a call's result, as upstream's
// statusCodeString.
func statusCode(err error) string {
	if err == nil {
		return codes.OK.String()
	}
	if errors.Is(err, context.Canceled) {
		return codes.Canceled.String()
	}
	return status.Code(err).String()
}

// parseFullMethod splits "/v1alpha1.Pods/ListPods" into the version and
// the method, as upstream's.
func parseFullMethod(full string) (version, method string) {
	parts := strings.Split(strings.TrimPrefix(full, "/"), "/")
	if len(parts) != 2 {
		return "unknown", "unknown"
	}
	return strings.Split(parts[0], ".")[0], parts[1]
}

func (m *apiMetrics) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	version, method := parseFullMethod(info.FullMethod)
	resp, err := handler(ctx, req)
	code := statusCode(err)
	m.total.WithLabelValues(version, code).Inc()
	switch method {
	case "ListPods":
		m.list.WithLabelValues(version, code).Inc()
	case "GetPod":
		m.get.WithLabelValues(version, code).Inc()
	}
	return resp, err
}

func (m *apiMetrics) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	version, method := parseFullMethod(info.FullMethod)
	err := handler(srv, ss)
	code := statusCode(err)
	m.total.WithLabelValues(version, code).Inc()
	if method == "WatchPods" {
		m.watch.WithLabelValues(version, code).Inc()
	}
	return err
}
