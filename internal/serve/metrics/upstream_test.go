package metrics

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

// TestBucketsMatchUpstream pins the histogram bucket layouts to upstream's
// pkg/kubelet/metrics.
func TestBucketsMatchUpstream(t *testing.T) {
	const pkg = "k8s.io/kubernetes/pkg/kubelet/metrics"
	src := upstreamsrc.New(t)
	calls := src.Value(pkg, "RuntimeOperationsDuration").Calls("metrics", "ExponentialBuckets")
	if len(calls) != 1 {
		t.Fatalf("upstream RuntimeOperationsDuration has %d ExponentialBuckets calls, want 1: update berth", len(calls))
	}
	c := calls[0]
	upRuntime := prometheus.ExponentialBuckets(c.Arg(0).AsFloat(), c.Arg(1).AsFloat(), int(c.Arg(2).AsInt()))
	for _, tt := range []struct {
		name            string
		upstream, berth []float64
	}{
		{"pod startup", src.Value(pkg, "podStartupDurationBuckets").AsFloats(), podStartupBuckets},
		{"runtime operations", upRuntime, runtimeBuckets},
	} {
		if diff := cmp.Diff(tt.upstream, tt.berth); diff != "" {
			t.Errorf("%s buckets differ from upstream's (-upstream +berth):\n%s", tt.name, diff)
		}
	}
}
