package metrics

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

// TestVolumeStatsMatchUpstream pins the kubelet_volume_stats_* metrics
// to upstream's collector: every metrics.NewDesc of its package, in
// order, with the name, help, labels and stability berth gives it.
// (Upstream v1.37 has no kubelet_volume_stats_health_status_abnormal: its
// CSI volume health moved to the volume health manager, behind the alpha
// CSIVolumeHealth gate, with no metric.)
func TestVolumeStatsMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	const pkg = "k8s.io/kubernetes/pkg/kubelet/metrics/collectors"
	type desc struct{ Name, Help, Labels, Stability string }
	var up []desc
	for _, name := range []string{"volumeStatsCapacityBytesDesc", "volumeStatsAvailableBytesDesc", "volumeStatsUsedBytesDesc",
		"volumeStatsInodesDesc", "volumeStatsInodesFreeDesc", "volumeStatsInodesUsedDesc"} {
		calls := src.Value(pkg, name).Calls("metrics", "NewDesc")
		if len(calls) != 1 {
			t.Fatalf("upstream %s has %d metrics.NewDesc calls, want 1", name, len(calls))
		}
		c := calls[0]
		fq := c.Arg(0).Calls("metrics", "BuildFQName")[0]
		up = append(up, desc{
			Name: fq.Arg(1).AsString() + "_" + fq.Arg(2).AsString(), Help: c.Arg(1).AsString(),
			Labels: strings.Join(c.Arg(2).AsStrings(), ","), Stability: c.Arg(4).AsString(),
		})
	}
	// Every volume stats desc of upstream's package is one of those.
	n := 0
	for _, f := range src.Files(pkg) {
		for _, c := range f.Calls("metrics", "NewDesc") {
			if fq := c.Arg(0).Calls("metrics", "BuildFQName"); len(fq) == 1 && strings.HasPrefix(fq[0].Arg(2).AsString(), "volume_stats_") {
				n++
			}
		}
	}
	if n != len(up) {
		t.Errorf("upstream's collectors make %d volume_stats_ descs, the test knows %d: add the new ones", n, len(up))
	}
	var ours []desc
	for i, d := range volumeStatsDescs {
		s := volumeStatsDesc(i).String()
		if !strings.Contains(s, `fqName: "kubelet_`+d.name+`"`) || !strings.Contains(s, `help: "`+alpha+d.help+`"`) {
			t.Errorf("desc %s lacks its name or help", s)
		}
		ours = append(ours, desc{Name: "kubelet_" + d.name, Help: d.help, Labels: strings.Join(volumeStatsLabels, ","), Stability: "ALPHA"})
	}
	if diff := cmp.Diff(up, ours); diff != "" {
		t.Errorf("volume stats metrics (-upstream +berth):\n%s", diff)
	}
}
