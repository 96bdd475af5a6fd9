package server

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRequestAttributes(t *testing.T) {
	u := &User{Name: "alice"}
	tests := []struct {
		method, path string
		wantVerb     string
		want         []string
	}{
		{"GET", "/pods", "get", []string{"pods", "proxy"}},
		{"GET", "/pods/", "get", []string{"pods", "proxy"}},
		{"GET", "/podsx", "get", []string{"proxy"}},
		{"GET", "/runningpods/", "get", []string{"pods", "proxy"}},
		{"GET", "/healthz", "get", []string{"healthz", "proxy"}},
		{"GET", "/healthz/syncloop", "get", []string{"healthz", "proxy"}},
		{"GET", "/configz", "get", []string{"configz", "proxy"}},
		{"GET", "/statusz", "get", []string{"statusz"}},
		{"GET", "/stats/summary", "get", []string{"stats"}},
		{"GET", "/stats", "get", []string{"stats"}},
		{"GET", "/metrics", "get", []string{"metrics"}},
		{"GET", "/metrics/probes", "get", []string{"metrics"}},
		{"GET", "/metrics/resource", "get", []string{"metrics"}},
		{"GET", "/metrics/cadvisor", "get", []string{"metrics"}},
		{"GET", "/metricsfoo", "get", []string{"proxy"}},
		{"GET", "/logs/", "get", []string{"log"}},
		{"GET", "/logs/syslog", "get", []string{"log"}},
		{"POST", "/checkpoint/ns/pod/c", "create", []string{"checkpoint"}},
		{"GET", "/containerLogs/ns/pod/c", "get", []string{"proxy"}},
		{"POST", "/exec/ns/pod/c", "create", []string{"proxy"}},
		{"GET", "/exec/ns/pod/c", "get", []string{"proxy"}},
		{"POST", "/run/ns/pod/c", "create", []string{"proxy"}},
		{"POST", "/portForward/ns/pod", "create", []string{"proxy"}},
		{"GET", "/attach/ns/pod/c", "get", []string{"proxy"}},
		{"HEAD", "/pods", "", []string{"pods", "proxy"}},
		{"HEAD", "/stats/summary", "", []string{"stats"}},
		{"PUT", "/x", "update", []string{"proxy"}},
		{"PATCH", "/x", "patch", []string{"proxy"}},
		{"DELETE", "/x", "delete", []string{"proxy"}},
		{"OPTIONS", "/x", "", []string{"proxy"}},
		{"GET", "/debug/pprof/heap", "get", []string{"proxy"}},
		{"GET", "/", "get", []string{"proxy"}},
		{"GET", "/statusz/x", "get", []string{"statusz"}},
		{"GET", "/flagz", "get", []string{"configz"}},
		{"GET", "/allocatedPods", "get", []string{"pods", "proxy"}},
		{"GET", "/allocatedPods/x", "get", []string{"pods", "proxy"}},
		{"GET", "/allocatedPodsx", "get", []string{"proxy"}},
	}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			got := RequestAttributes(u, tc.method, tc.path, "node-1")
			var want []Attributes
			for _, sub := range tc.want {
				want = append(want, Attributes{User: u, Verb: tc.wantVerb, Resource: "nodes", Subresource: sub, Name: "node-1", Path: tc.path})
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
