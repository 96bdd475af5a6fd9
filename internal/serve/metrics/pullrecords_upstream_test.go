package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

// TestPullRecordMetricsMatchUpstream pins the names and help of the image
// pull records' metrics to upstream's pkg/kubelet/images/pullmanager.
func TestPullRecordMetricsMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	const pkg = "k8s.io/kubernetes/pkg/kubelet/images/pullmanager"
	p := newPullRecords()
	for upstream, ours := range map[string]prometheus.Collector{
		"mustPullChecksTotal": p.checks, "fsPullIntentsSize": p.intents, "fsPulledRecordsSize": p.records,
	} {
		opts := src.Value(pkg, upstream).CompositeLits()[0].Fields()
		name, help := opts["Name"].AsString(), opts["Help"].AsString()
		ch := make(chan *prometheus.Desc, 1)
		ours.Describe(ch)
		desc := (<-ch).String()
		for _, want := range []string{`"kubelet_` + name + `"`, `help: "` + alpha + help + `"`} {
			if !strings.Contains(desc, want) {
				t.Errorf("%s: metric %s lacks upstream's %s", upstream, desc, want)
			}
		}
	}
}
