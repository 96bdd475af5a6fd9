package podresources

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// alpha is the prefix component-base gives the help of an ALPHA metric.
const alpha = "[ALPHA] "

// endpointMetrics are upstream's kubelet_pod_resources_endpoint_*,
// labelled server_api_version. Upstream declares the List and
// GetAllocatableResources error counters but never counts them (those
// calls cannot fail); berth registers them the same, at zero.
type endpointMetrics struct {
	total, list, getAllocatable, get            *prometheus.CounterVec
	listErrors, getAllocatableErrors, getErrors *prometheus.CounterVec
}

// endpointMetricSpecs are the names and help, as upstream's.
var endpointMetricSpecs = map[string]string{
	"pod_resources_endpoint_requests_total":           "Cumulative number of requests to the PodResource endpoint. Broken down by server api version.",
	"pod_resources_endpoint_requests_list":            "Number of requests to the PodResource List endpoint. Broken down by server api version.",
	"pod_resources_endpoint_requests_get_allocatable": "Number of requests to the PodResource GetAllocatableResources endpoint. Broken down by server api version.",
	"pod_resources_endpoint_errors_list":              "Number of requests to the PodResource List endpoint which returned error. Broken down by server api version.",
	"pod_resources_endpoint_errors_get_allocatable":   "Number of requests to the PodResource GetAllocatableResources endpoint which returned error. Broken down by server api version.",
	"pod_resources_endpoint_requests_get":             "Number of requests to the PodResource Get endpoint. Broken down by server api version.",
	"pod_resources_endpoint_errors_get":               "Number of requests to the PodResource Get endpoint which returned error. Broken down by server api version.",
}

const versionLabel = "server_api_version"

func newCounter(name string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: "kubelet", Name: name, Help: alpha + endpointMetricSpecs[name]}, []string{versionLabel})
}

func newEndpointMetrics(reg prometheus.Registerer) (*endpointMetrics, error) {
	m := &endpointMetrics{
		total:                newCounter("pod_resources_endpoint_requests_total"),
		list:                 newCounter("pod_resources_endpoint_requests_list"),
		getAllocatable:       newCounter("pod_resources_endpoint_requests_get_allocatable"),
		get:                  newCounter("pod_resources_endpoint_requests_get"),
		listErrors:           newCounter("pod_resources_endpoint_errors_list"),
		getAllocatableErrors: newCounter("pod_resources_endpoint_errors_get_allocatable"),
		getErrors:            newCounter("pod_resources_endpoint_errors_get"),
	}
	for _, c := range []prometheus.Collector{m.total, m.list, m.getAllocatable, m.get, m.listErrors, m.getAllocatableErrors, m.getErrors} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register pod resources metrics: %w", err)
		}
	}
	return m, nil
}
