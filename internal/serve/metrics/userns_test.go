package metrics

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

func TestUserNamespacedPodStarts(t *testing.T) {
	m, _ := newTestMetrics(t)
	u, err := m.NewUserNamespaces()
	if err != nil {
		t.Fatal(err)
	}
	u.PodStarted(false)
	u.PodStarted(true)
	u.PodStarted(true)
	want := `# HELP kubelet_started_user_namespaced_pods_errors_total [ALPHA] Cumulative number of errors when starting pods with user namespaces. This metric will only be collected on Linux.
# TYPE kubelet_started_user_namespaced_pods_errors_total counter
kubelet_started_user_namespaced_pods_errors_total 2
# HELP kubelet_started_user_namespaced_pods_total [ALPHA] Cumulative number of pods with user namespaces started. This metric will only be collected on Linux.
# TYPE kubelet_started_user_namespaced_pods_total counter
kubelet_started_user_namespaced_pods_total 3
`
	got := render(t, m.Registry(), "kubelet_started_user_namespaced_pods_total", "kubelet_started_user_namespaced_pods_errors_total")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
}

// TestUserNamespaceMetricsMatchUpstream pins their names and help to
// upstream's pkg/kubelet/metrics.
func TestUserNamespaceMetricsMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	const pkg = "k8s.io/kubernetes/pkg/kubelet/metrics"
	u := newUserNamespaces()
	for upstream, ours := range map[string]prometheus.Collector{
		"StartedUserNamespacedPodsTotal": u.started, "StartedUserNamespacedPodsErrorsTotal": u.errors,
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
