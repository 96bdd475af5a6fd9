package metrics

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPodStartLimit(t *testing.T) {
	m, _ := newTestMetrics(t)
	m.ObservePodStartLimit(4)
	m.ObservePodStartLimit(7)
	want := `# HELP berth_pod_start_limit How many new pods (a sandbox and its first containers) may start at once; it grows while the runtime's sandbox and container start latencies hold and shrinks when they climb.
# TYPE berth_pod_start_limit gauge
berth_pod_start_limit 7
`
	if diff := cmp.Diff(want, render(t, m.Registry(), "berth_pod_start_limit")); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
}
