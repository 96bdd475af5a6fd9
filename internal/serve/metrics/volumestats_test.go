package metrics

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

func u64(v uint64) *uint64 { return &v }

// TestVolumeStatsMetrics: each claim's volume is reported once (two pods
// share claim "shared"), under its namespace and name; a volume without a
// pvcRef is not; the registry's other metrics are still served. A failed
// listing reports no volume.
func TestVolumeStatsMetrics(t *testing.T) {
	m, _ := newTestMetrics(t)
	fs := func(capacity uint64) statsapi.FsStats {
		return statsapi.FsStats{CapacityBytes: u64(capacity), AvailableBytes: u64(60), UsedBytes: u64(40),
			Inodes: u64(10), InodesFree: u64(7), InodesUsed: u64(3)}
	}
	shared := &statsapi.PVCReference{Name: "shared", Namespace: "ns"}
	pods := []statsapi.PodStats{
		{VolumeStats: []statsapi.VolumeStats{
			{Name: "cache", FsStats: fs(1)},
			{Name: "data", PVCRef: shared, FsStats: fs(100)},
		}},
		{VolumeStats: []statsapi.VolumeStats{
			{Name: "data", PVCRef: shared, FsStats: fs(999)},
			{Name: "db", PVCRef: &statsapi.PVCReference{Name: "db", Namespace: "other"}, FsStats: statsapi.FsStats{CapacityBytes: u64(5)}},
		}},
	}
	var listErr error
	h := m.HandlerWithVolumeStats(func(context.Context) ([]statsapi.PodStats, error) { return pods, listErr })
	scrape := func() string {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		b, _ := io.ReadAll(rec.Body)
		return string(b)
	}
	body := scrape()
	var got []string
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "kubelet_volume_stats_") || strings.HasPrefix(line, "# HELP kubelet_volume_stats_capacity") {
			got = append(got, line)
		}
	}
	want := []string{
		`kubelet_volume_stats_available_bytes{namespace="ns",persistentvolumeclaim="shared"} 60`,
		"# HELP kubelet_volume_stats_capacity_bytes [ALPHA] Capacity in bytes of the volume",
		`kubelet_volume_stats_capacity_bytes{namespace="ns",persistentvolumeclaim="shared"} 100`,
		`kubelet_volume_stats_capacity_bytes{namespace="other",persistentvolumeclaim="db"} 5`,
		`kubelet_volume_stats_inodes{namespace="ns",persistentvolumeclaim="shared"} 10`,
		`kubelet_volume_stats_inodes_free{namespace="ns",persistentvolumeclaim="shared"} 7`,
		`kubelet_volume_stats_inodes_used{namespace="ns",persistentvolumeclaim="shared"} 3`,
		`kubelet_volume_stats_used_bytes{namespace="ns",persistentvolumeclaim="shared"} 40`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("volume stats (-want +got):\n%s", diff)
	}
	if !strings.Contains(body, `kubelet_node_name{node="node-a"} 1`) {
		t.Errorf("the registry's metrics are missing:\n%s", body)
	}
	listErr = errors.New("runtime down")
	if body := scrape(); strings.Contains(body, "kubelet_volume_stats_capacity_bytes{") || !strings.Contains(body, "kubelet_node_name") {
		t.Errorf("after a failed listing:\n%s", body)
	}
}
