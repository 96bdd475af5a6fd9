package httpget

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/berthk8s/berth/internal/config"
)

// result is what a caller sends.
type result struct {
	URL, Host string
	Header    http.Header
	Err       string
}

// TestNewRequest covers both callers. Where upstream's hooks and probes
// differ, the difference is the caller's and the row says so: the
// User-Agent's purpose, and a pod without an IP (a hook refuses to build
// the request, reporting "failed to find networking container"; a probe
// builds it with an empty host, as upstream's does).
func TestNewRequest(t *testing.T) {
	c := &corev1.Container{Name: "app", Ports: []corev1.ContainerPort{
		{Name: "web", ContainerPort: 8080}, {Name: "big", ContainerPort: 70000},
	}}
	probeUA, hookUA := "kube-probe/1.37", "kube-lifecycle/1.37"
	std := func(ua string) http.Header { return http.Header{"User-Agent": {ua}, "Accept": {"*/*"}} }
	port80 := intstr.FromInt32(80)
	tests := []struct {
		name   string
		action corev1.HTTPGetAction
		podIP  string
		ua     string
		want   result
	}{
		{name: "probe: http to the pod IP with upstream's headers",
			action: corev1.HTTPGetAction{Path: "/healthz", Port: port80}, podIP: "10.0.0.5", ua: probeUA,
			want: result{URL: "http://10.0.0.5:80/healthz", Header: std(probeUA)}},
		{name: "hook: the same, with the lifecycle User-Agent",
			action: corev1.HTTPGetAction{Path: "/healthz", Port: port80}, podIP: "10.0.0.5", ua: hookUA,
			want: result{URL: "http://10.0.0.5:80/healthz", Header: std(hookUA)}},
		{name: "scheme is lower-cased",
			action: corev1.HTTPGetAction{Scheme: corev1.URISchemeHTTPS, Port: intstr.FromInt32(443), Path: "/"}, podIP: "10.0.0.5", ua: probeUA,
			want: result{URL: "https://10.0.0.5:443/", Header: std(probeUA)}},
		{name: "the action's host wins over the pod IP",
			action: corev1.HTTPGetAction{Host: "example.test", Port: port80, Path: "/"}, podIP: "10.0.0.5", ua: hookUA,
			want: result{URL: "http://example.test:80/", Header: std(hookUA)}},
		{name: "an IPv6 host is bracketed",
			action: corev1.HTTPGetAction{Port: port80, Path: "/"}, podIP: "fd00::1", ua: probeUA,
			want: result{URL: "http://[fd00::1]:80/", Header: std(probeUA)}},
		{name: "probe of a pod without an IP: empty host (a hook fails before)",
			action: corev1.HTTPGetAction{Port: port80, Path: "/x"}, ua: probeUA,
			want: result{URL: "http://:80/x", Header: std(probeUA)}},
		{name: "a Host header sets the request's host, not the URL's",
			action: corev1.HTTPGetAction{Port: port80, Path: "/", HTTPHeaders: []corev1.HTTPHeader{{Name: "Host", Value: "vhost"}}},
			podIP:  "10.0.0.5", ua: hookUA,
			want: result{URL: "http://10.0.0.5:80/", Host: "vhost", Header: http.Header{"Host": {"vhost"}, "User-Agent": {hookUA}, "Accept": {"*/*"}}}},
		{name: "port by name is the containerPort",
			action: corev1.HTTPGetAction{Port: intstr.FromString("web"), Path: "/"}, podIP: "10.0.0.5", ua: probeUA,
			want: result{URL: "http://10.0.0.5:8080/", Header: std(probeUA)}},
		{name: "a number written as a string is a name",
			action: corev1.HTTPGetAction{Port: intstr.FromString("9000")}, podIP: "10.0.0.5", ua: hookUA,
			want: result{Err: `port "9000" not found`}},
		{name: "unknown port name", action: corev1.HTTPGetAction{Port: intstr.FromString("nope")}, podIP: "10.0.0.5", ua: probeUA,
			want: result{Err: `port "nope" not found`}},
		{name: "port 0", action: corev1.HTTPGetAction{Port: intstr.FromInt32(0)}, podIP: "10.0.0.5", ua: probeUA,
			want: result{Err: "invalid port number: 0"}},
		{name: "port 65536", action: corev1.HTTPGetAction{Port: intstr.FromInt32(65536)}, podIP: "10.0.0.5", ua: hookUA,
			want: result{Err: "invalid port number: 65536"}},
		{name: "named port out of range", action: corev1.HTTPGetAction{Port: intstr.FromString("big")}, podIP: "10.0.0.5", ua: hookUA,
			want: result{Err: "invalid port number: 70000"}},
		{name: "path without a leading slash gets one",
			action: corev1.HTTPGetAction{Port: port80, Path: "healthz"}, podIP: "10.0.0.5", ua: probeUA,
			want: result{URL: "http://10.0.0.5:80/healthz", Header: std(probeUA)}},
		{name: "no path", action: corev1.HTTPGetAction{Port: port80}, podIP: "10.0.0.5", ua: probeUA,
			want: result{URL: "http://10.0.0.5:80", Header: std(probeUA)}},
		{name: "query kept, with or without a leading slash",
			action: corev1.HTTPGetAction{Port: port80, Path: "a/b?q=1&r=%20"}, podIP: "10.0.0.5", ua: hookUA,
			want: result{URL: "http://10.0.0.5:80/a/b?q=1&r=%20", Header: std(hookUA)}},
		{name: "a path that does not parse is taken literally",
			action: corev1.HTTPGetAction{Port: port80, Path: "/%zz"}, podIP: "10.0.0.5", ua: probeUA,
			want: result{URL: "http://10.0.0.5:80/%25zz", Header: std(probeUA)}},
		{name: "own User-Agent (any case), empty Accept removed, repeated headers kept",
			action: corev1.HTTPGetAction{Port: port80, HTTPHeaders: []corev1.HTTPHeader{
				{Name: "user-agent", Value: "mine"}, {Name: "Accept", Value: ""}, {Name: "X-A", Value: "1"}, {Name: "X-A", Value: "2"},
			}}, podIP: "10.0.0.5", ua: probeUA,
			want: result{URL: "http://10.0.0.5:80", Header: http.Header{"User-Agent": {"mine"}, "X-A": {"1", "2"}}}},
		{name: "own Accept kept",
			action: corev1.HTTPGetAction{Port: port80, HTTPHeaders: []corev1.HTTPHeader{{Name: "Accept", Value: "application/json"}}},
			podIP:  "10.0.0.5", ua: hookUA,
			want: result{URL: "http://10.0.0.5:80", Header: http.Header{"User-Agent": {hookUA}, "Accept": {"application/json"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got result
			req, err := NewRequest(t.Context(), &tt.action, c, tt.podIP, tt.ua)
			if err != nil {
				got.Err = err.Error()
			} else {
				got = result{URL: req.URL.String(), Host: req.Host, Header: req.Header}
				if req.Method != http.MethodGet {
					t.Errorf("method %s, want GET", req.Method)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("NewRequest (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResolvePortWithoutKind(t *testing.T) {
	if _, err := ResolvePort(intstr.IntOrString{Type: 7}, &corev1.Container{}); err == nil ||
		!strings.HasPrefix(err.Error(), "intOrString had no kind") {
		t.Errorf("ResolvePort of no kind: err = %v", err)
	}
}

func TestUserAgent(t *testing.T) {
	for _, tt := range []struct {
		purpose       Purpose
		version, want string
	}{
		{Probe, "v1.37.2", "kube-probe/1.37"},
		{Lifecycle, "v1.37.2", "kube-lifecycle/1.37"},
		{Probe, "v1.4.0-alpha.1", "kube-probe/1.4"},
		{Lifecycle, "v2.0.10", "kube-lifecycle/2.0"},
	} {
		if got, err := UserAgent(tt.purpose, tt.version); err != nil || got != tt.want {
			t.Errorf("UserAgent(%s, %s) = %q, %v; want %q", tt.purpose, tt.version, got, err, tt.want)
		}
	}
	if got, err := UserAgent(Probe, "1.37"); err == nil {
		t.Errorf("UserAgent of a version that is not semantic = %q, no error", got)
	}
	// The version the wiring passes is berth's own.
	if _, err := UserAgent(Probe, config.KubernetesVersion); err != nil {
		t.Errorf("UserAgent(Probe, config.KubernetesVersion): %v", err)
	}
}
