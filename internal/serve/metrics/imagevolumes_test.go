package metrics

import (
	"go/ast"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

func TestImageVolumeCounts(t *testing.T) {
	m, _ := newTestMetrics(t)
	v, err := m.NewImageVolumes()
	if err != nil {
		t.Fatal(err)
	}
	v.Started(1, 2, false) // one volume mounted twice
	v.Started(2, 2, true)
	v.Started(0, 0, false) // a container without image volumes
	want := `# HELP kubelet_image_volume_mounted_errors_total [BETA] Number of failed image volume mounts.
# TYPE kubelet_image_volume_mounted_errors_total counter
kubelet_image_volume_mounted_errors_total 2
# HELP kubelet_image_volume_mounted_succeed_total [BETA] Number of successful image volume mounts.
# TYPE kubelet_image_volume_mounted_succeed_total counter
kubelet_image_volume_mounted_succeed_total 2
# HELP kubelet_image_volume_requested_total [BETA] Number of requested image volumes.
# TYPE kubelet_image_volume_requested_total counter
kubelet_image_volume_requested_total 3
`
	got := render(t, m.Registry(), "kubelet_image_volume_requested_total", "kubelet_image_volume_mounted_succeed_total", "kubelet_image_volume_mounted_errors_total")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
}

// TestImageVolumeMetricsMatchUpstream pins their names, help and
// stability to upstream's pkg/kubelet/metrics.
func TestImageVolumeMetricsMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	const pkg = "k8s.io/kubernetes/pkg/kubelet/metrics"
	v := newImageVolumes()
	for upstream, ours := range map[string]prometheus.Collector{
		"ImageVolumeRequestedTotal": v.requested, "ImageVolumeMountedSucceedTotal": v.succeeded, "ImageVolumeMountedErrorsTotal": v.failed,
	} {
		opts := src.Value(pkg, upstream).CompositeLits()[0].Fields()
		name, help := opts["Name"].AsString(), opts["Help"].AsString()
		if sel, ok := opts["StabilityLevel"].Node.(*ast.SelectorExpr); !ok || sel.Sel.Name != "BETA" {
			t.Errorf("%s: upstream's stability is not BETA, berth's help says [BETA]", upstream)
		}
		ch := make(chan *prometheus.Desc, 1)
		ours.Describe(ch)
		desc := (<-ch).String()
		for _, want := range []string{`"kubelet_` + name + `"`, `help: "` + beta + help + `"`} {
			if !strings.Contains(desc, want) {
				t.Errorf("%s: metric %s lacks upstream's %s", upstream, desc, want)
			}
		}
	}
}
