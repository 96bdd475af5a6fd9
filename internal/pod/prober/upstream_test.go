package prober

import (
	"testing"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

// TestConstantsMatchUpstream pins the event reasons, the retry count and
// the response body limit to upstream's.
func TestConstantsMatchUpstream(t *testing.T) {
	const (
		events = "k8s.io/kubernetes/pkg/kubelet/events"
		prober = "k8s.io/kubernetes/pkg/kubelet/prober"
		http   = "k8s.io/kubernetes/pkg/probe/http"
	)
	src := upstreamsrc.New(t)
	for _, tt := range []struct{ berth, pkg, name string }{
		{EventUnhealthy, events, "ContainerUnhealthy"},
		{EventProbeWarning, events, "ContainerProbeWarning"},
	} {
		if up := src.Value(tt.pkg, tt.name).AsString(); up != tt.berth {
			t.Errorf("berth %q, upstream %s.%s %q", tt.berth, tt.pkg, tt.name, up)
		}
	}
	for _, tt := range []struct {
		berth     int64
		pkg, name string
	}{
		{maxRetries, prober, "maxProbeRetries"},
		{maxBody, http, "maxRespBodyLength"},
	} {
		if up := src.Value(tt.pkg, tt.name).AsInt(); up != tt.berth {
			t.Errorf("berth %d, upstream %s.%s %d", tt.berth, tt.pkg, tt.name, up)
		}
	}
}
