package server

import (
	"net/http"
	"strings"
)

// Attributes is one authorization question about a kubelet API request, in
// the terms of a SubjectAccessReview on the Node object: may User do Verb on
// nodes/Subresource named Name? A plain value.
type Attributes struct {
	User        *User
	Verb        string
	Resource    string
	Subresource string
	Name        string
	// Path is the request path, for logs.
	Path string
}

// Path prefixes that pick the node subresource a request is checked against.
const (
	statsPath       = "/stats/"
	metricsPath     = "/metrics"
	logsPath        = "/logs/"
	checkpointPath  = "/checkpoint"
	podsPath        = "/pods"
	runningPodsPath = "/runningpods/"
	healthzPath     = "/healthz"
	configzPath     = "/configz"
	statuszPath     = "/statusz"
)

// apiVerb maps an HTTP method to the API verb upstream authorizes with
// (pkg/kubelet/server/auth.go GetRequestAttributes). Methods outside the
// table, HEAD among them, map to "", as upstream: an authorizer that knows
// no such verb denies them.
func apiVerb(method string) string {
	switch method {
	case http.MethodPost:
		return "create"
	case http.MethodGet:
		return "get"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		return "delete"
	}
	return ""
}

// isSubpath reports whether p is prefix itself or below it (the trailing
// slash of prefix is ignored).
func isSubpath(p, prefix string) bool {
	prefix = strings.TrimSuffix(prefix, "/")
	return p == prefix || (strings.HasPrefix(p, prefix) && p[len(prefix)] == '/')
}

// Paths berth does not serve but authorizes as upstream does before it
// answers 404: nodes/pods and nodes/configz.
const (
	allocatedPodsPath = "/allocatedPods"
	flagzPath         = "/flagz"
)

// RequestAttributes returns the checks a request must pass, in order; the
// request is allowed when any of them is, as upstream with its default
// feature gates (KubeletFineGrainedAuthz, GA): /allocatedPods, /pods and
// /runningpods are checked against nodes/pods, /healthz against
// nodes/healthz and /configz against nodes/configz, each falling back to
// nodes/proxy; /stats/* is nodes/stats, /metrics* nodes/metrics, /logs/*
// nodes/log, /checkpoint/* nodes/checkpoint, /statusz nodes/statusz and
// /flagz nodes/configz, with no fallback; everything else (including exec,
// attach, portForward, run and containerLogs) nodes/proxy.
// tools/difftest holds this to upstream's auth.go.
//
// Upstream authorizes a WebSocket GET on /exec, /attach and /portForward
// with the get verb like any GET (kubernetes/kubernetes#136550, which would
// have forced create, was closed unmerged); berth does the same.
func RequestAttributes(u *User, method, path, nodeName string) []Attributes {
	var subresources []string
	switch {
	case isSubpath(path, allocatedPodsPath), isSubpath(path, podsPath), isSubpath(path, runningPodsPath):
		subresources = append(subresources, "pods")
	case isSubpath(path, healthzPath):
		subresources = append(subresources, "healthz")
	case isSubpath(path, configzPath):
		subresources = append(subresources, "configz")
	}
	switch {
	case isSubpath(path, statsPath):
		subresources = append(subresources, "stats")
	case isSubpath(path, metricsPath):
		subresources = append(subresources, "metrics")
	case isSubpath(path, logsPath):
		subresources = append(subresources, "log")
	case isSubpath(path, checkpointPath):
		subresources = append(subresources, "checkpoint")
	case isSubpath(path, statuszPath):
		subresources = append(subresources, "statusz")
	case isSubpath(path, flagzPath):
		subresources = append(subresources, "configz")
	default:
		subresources = append(subresources, "proxy")
	}
	verb := apiVerb(method)
	out := make([]Attributes, 0, len(subresources))
	for _, sub := range subresources {
		out = append(out, Attributes{User: u, Verb: verb, Resource: "nodes", Subresource: sub, Name: nodeName, Path: path})
	}
	return out
}
