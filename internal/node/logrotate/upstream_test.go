package logrotate

import (
	"testing"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

// TestNamesMatchUpstream pins the rotated file names to upstream's
// container log manager, which containerlogs (and log shippers) read.
func TestNamesMatchUpstream(t *testing.T) {
	const pkg = "k8s.io/kubernetes/pkg/kubelet/logs"
	src := upstreamsrc.New(t)
	for _, tt := range []struct{ berth, name string }{
		{timestampFormat, "timestampFormat"},
		{compressSuffix, "compressSuffix"},
		{tmpSuffix, "tmpSuffix"},
	} {
		if up := src.Value(pkg, tt.name).AsString(); up != tt.berth {
			t.Errorf("%s: upstream %q, berth %q", tt.name, up, tt.berth)
		}
	}
}
