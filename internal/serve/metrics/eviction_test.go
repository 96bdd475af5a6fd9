package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

func TestObserveEviction(t *testing.T) {
	m, _ := newTestMetrics(t)
	m.ObserveEviction("memory.available")
	m.ObserveEviction("memory.available")
	m.ObserveEviction("emptydirfs.limit")
	m.ObserveEvictionStatsAge("memory.available", 3*time.Second)
	want := `
# HELP kubelet_evictions [ALPHA] Cumulative number of pod evictions by eviction signal
# TYPE kubelet_evictions counter
kubelet_evictions{eviction_signal="emptydirfs.limit"} 1
kubelet_evictions{eviction_signal="memory.available"} 2
`
	if diff := cmp.Diff(strings.TrimPrefix(want, "\n"), render(t, m.Registry(), "kubelet_evictions")); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
	if got := render(t, m.Registry(), "kubelet_eviction_stats_age_seconds"); !strings.Contains(got, `kubelet_eviction_stats_age_seconds_sum{eviction_signal="memory.available"} 3`) {
		t.Errorf("stats age:\n%s", got)
	}
}

// TestEvictionNamesMatchUpstream pins the eviction metric names to
// upstream's pkg/kubelet/metrics keys.
func TestEvictionNamesMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	const pkg = "k8s.io/kubernetes/pkg/kubelet/metrics"
	for _, tt := range []struct{ key, berth string }{
		{"EvictionsKey", evictionsName},
		{"EvictionStatsAgeKey", evictionStatsAgeName},
	} {
		if up := src.Value(pkg, tt.key).AsString(); up != tt.berth {
			t.Errorf("%s: berth %q, upstream %q", tt.key, tt.berth, up)
		}
	}
}
