package logquery

import (
	"testing"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

// TestLimitsMatchUpstream pins the limits, the unsafe characters and the
// journalctl time layout to upstream's kubelet_server_journal.go.
func TestLimitsMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	const pkg = "k8s.io/kubernetes/pkg/kubelet"
	for _, c := range []struct {
		name      string
		got, want int64
	}{
		{"maxTailLines", MaxTailLines, src.Value(pkg, "maxTailLines").AsInt()},
		{"maxServiceLength", MaxServiceLength, src.Value(pkg, "maxServiceLength").AsInt()},
		{"maxServices", MaxServices, src.Value(pkg, "maxServices").AsInt()},
	} {
		if c.got != c.want {
			t.Errorf("%s: berth %d, upstream %d", c.name, c.got, c.want)
		}
	}
	if up := src.Value(pkg, "dateLayout").AsString(); up != dateLayout {
		t.Errorf("dateLayout %q, upstream %q", dateLayout, up)
	}
	if up := src.Value(pkg, "reServiceNameUnsafeCharacters").AsString(); up != serviceNameUnsafe.String() {
		t.Errorf("unsafe service name characters %q, upstream %q", serviceNameUnsafe.String(), up)
	}
}
