package metrics

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

// TestImageGCMetricMatchesUpstream pins kubelet_image_garbage_collected_total
// (name, help) and its reasons to upstream's pkg/kubelet/metrics and
// pkg/kubelet/images.
func TestImageGCMetricMatchesUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	const pkg = "k8s.io/kubernetes/pkg/kubelet/metrics"
	opts := src.Value(pkg, "ImageGarbageCollectedTotal").CompositeLits()[0].Fields()
	upName := src.Value(pkg, "ImageGarbageCollectedTotalKey").AsString()
	upHelp := opts["Help"].AsString()
	upReasons := []string{
		src.Value("k8s.io/kubernetes/pkg/kubelet/images", "ImageGarbageCollectedTotalReasonAge").AsString(),
		src.Value("k8s.io/kubernetes/pkg/kubelet/images", "ImageGarbageCollectedTotalReasonSpace").AsString(),
	}
	c := newImageGCTotal()
	desc := c.WithLabelValues("age").Desc().String()
	for _, want := range []string{`"kubelet_` + upName + `"`, `help: "` + alpha + upHelp + `"`} {
		if !strings.Contains(desc, want) {
			t.Errorf("metric %s lacks upstream's %s", desc, want)
		}
	}
	if diff := cmp.Diff(upReasons, imageGCReasons); diff != "" {
		t.Errorf("reasons differ from upstream's (-upstream +berth):\n%s", diff)
	}
}
