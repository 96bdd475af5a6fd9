package machine

import (
	"testing"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

// TestThermalThrottleMatchesUpstream pins where the per-CPU
// thermal_throttle directories are looked for to upstream's
// securitycontext, which generates its masked paths from them.
func TestThermalThrottleMatchesUpstream(t *testing.T) {
	const pkg = "k8s.io/kubernetes/pkg/securitycontext"
	src := upstreamsrc.New(t)
	formats := src.Value(pkg, "defaultMaskedPaths").Calls("fmt", "Sprintf")
	if len(formats) != 1 {
		t.Fatalf("upstream %s defaultMaskedPaths formats %d paths, want 1 (thermal_throttle): update berth", pkg, len(formats))
	}
	reads := src.Value(pkg, "possibleCPUsParsed").Calls("os", "ReadFile")
	if len(reads) != 1 {
		t.Fatalf("upstream %s possibleCPUsParsed reads %d files, want 1: update berth", pkg, len(reads))
	}
	for _, tt := range []struct{ what, upstream, berth string }{
		{"per-CPU path", formats[0].Arg(0).AsString(), thermalThrottleFormat},
		{"possible CPUs file", reads[0].Arg(0).AsString(), possibleCPUsFile},
	} {
		if tt.upstream != tt.berth {
			t.Errorf("%s: upstream %q, berth %q", tt.what, tt.upstream, tt.berth)
		}
	}
}
