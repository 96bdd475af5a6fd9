package httpget

import (
	"fmt"
	"testing"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

// TestUserAgentMatchesUpstream pins the User-Agents to upstream's: the
// format of pkg/probe/http's userAgent (and of the gRPC probe's), rendered
// for a version, must give what berth gives for it, and each caller's
// purpose must be the one upstream's prober and lifecycle handlers pass.
func TestUserAgentMatchesUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	only := func(calls []upstreamsrc.Node, what string) upstreamsrc.Node {
		if len(calls) != 1 {
			t.Fatalf("upstream has %d %s where berth expects 1: update berth", len(calls), what)
		}
		return calls[0]
	}
	httpFormat := only(src.Func("k8s.io/kubernetes/pkg/probe/http", "userAgent").Calls("fmt", "Sprintf"),
		"fmt.Sprintf calls in pkg/probe/http userAgent").Arg(0).AsString()
	grpcFormat := only(src.Func("k8s.io/kubernetes/pkg/probe/grpc", "Probe").Calls("grpc", "WithUserAgent"),
		"grpc.WithUserAgent calls in pkg/probe/grpc Probe").Arg(0).Arg(0).AsString()
	purpose := func(pkg, fn string) string {
		return only(src.Func(pkg, fn).Calls("httpprobe", "NewRequestForHTTPGetAction"),
			"NewRequestForHTTPGetAction calls in "+pkg+" "+fn).Arg(3).AsString()
	}
	probe := purpose("k8s.io/kubernetes/pkg/kubelet/prober", "runProbe")
	hook := purpose("k8s.io/kubernetes/pkg/kubelet/lifecycle", "runHTTPHandler")
	const v = "v1.37.2"
	userAgent := func(p Purpose) string {
		ua, err := UserAgent(p, v)
		if err != nil {
			t.Fatal(err)
		}
		return ua
	}
	for _, tt := range []struct{ what, upstream, berth string }{
		{"probe", fmt.Sprintf(httpFormat, probe, "1", "37"), userAgent(Probe)},
		{"hook", fmt.Sprintf(httpFormat, hook, "1", "37"), userAgent(Lifecycle)},
		{"gRPC probe", fmt.Sprintf(grpcFormat, "1", "37"), userAgent(Probe)},
	} {
		if tt.upstream != tt.berth {
			t.Errorf("%s User-Agent for %s: upstream %q, berth %q", tt.what, v, tt.upstream, tt.berth)
		}
	}
}
