package containerconfig

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/berthk8s/berth/internal/platform/machine"
)

func TestNewNode(t *testing.T) {
	thermal := []string{"/sys/devices/system/cpu/cpu0/thermal_throttle"}
	base := func() Node {
		return Node{
			SeccompProfileRoot: "/var/lib/berth/seccomp",
			MemoryCapacity:     8 << 30,
			MaskedPaths:        defaultMaskedPaths(nil),
		}
	}
	tests := []struct {
		name string
		host func(*machine.Info)
		want func(*Node)
		dflt bool
	}{
		{name: "base"},
		{name: "seccompDefault", dflt: true, want: func(n *Node) { n.SeccompDefault = true }},
		{
			name: "huge page sizes smallest first, unparsable ones dropped",
			host: func(h *machine.Info) { h.HugePages = map[string]int64{"1Gi": 0, "2Mi": 512, "bogus": 1} },
			want: func(n *Node) { n.HugePageSizes = []int64{2 << 20, 1 << 30} },
		},
		{
			name: "thermal_throttle directories are masked after the fixed paths",
			host: func(h *machine.Info) { h.ThermalThrottleDirs = thermal },
			want: func(n *Node) { n.MaskedPaths = append(defaultMaskedPaths(nil), thermal...) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			host := machine.Info{MemoryBytes: 8 << 30, KernelVersion: "6.1.0"}
			if tt.host != nil {
				tt.host(&host)
			}
			want := base()
			if tt.want != nil {
				tt.want(&want)
			}
			got := NewNode(host, "/var/lib/berth/seccomp", tt.dflt)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("NewNode (-want +got):\n%s", diff)
			}
		})
	}
}
