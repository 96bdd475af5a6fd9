package stats

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

func TestParseNetDev(t *testing.T) {
	f, err := os.Open("testdata/net_dev")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got := networkFromInterfaces(parseNetDev(f))
	eth0 := statsapi.InterfaceStats{Name: "eth0", RxBytes: p64(1000000), RxErrors: p64(3), TxBytes: p64(500000), TxErrors: p64(4)}
	want := &statsapi.NetworkStats{
		InterfaceStats: eth0,
		Interfaces: []statsapi.InterfaceStats{eth0,
			{Name: "ens5", RxBytes: p64(42), RxErrors: p64(0), TxBytes: p64(84), TxErrors: p64(1)}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("network (-want +got):\n%s", diff)
	}
	if got := networkFromInterfaces(parseNetDev(strings.NewReader("lo: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n"))); got != nil {
		t.Errorf("only loopback: %+v, want nil", got)
	}
}

func TestCountProcessors(t *testing.T) {
	in := "processor\t: 0\nmodel name\t: x\n\nprocessor\t: 1\nflags\t: processor\n"
	if got := countProcessors(strings.NewReader(in)); got != 2 {
		t.Errorf("countProcessors = %d, want 2", got)
	}
}

func TestPidFromInfo(t *testing.T) {
	for _, tt := range []struct {
		name string
		info map[string]string
		want int
		ok   bool
	}{
		{"containerd", map[string]string{"info": `{"pid":1234,"processStatus":"running"}`}, 1234, true},
		{"no info", nil, 0, false},
		{"not json", map[string]string{"info": "pid=1"}, 0, false},
		{"no pid", map[string]string{"info": `{"processStatus":"running"}`}, 0, false},
	} {
		got, err := pidFromInfo(tt.info)
		if got != tt.want || (err == nil) != tt.ok {
			t.Errorf("%s: pidFromInfo = %d, %v; want %d, ok %v", tt.name, got, err, tt.want, tt.ok)
		}
	}
}

func TestParseProcCgroup(t *testing.T) {
	const v1 = "12:cpu,cpuacct:/cpu-path\n4:memory:/process_api/abc\n1:name=systemd:/\n0::/\n"
	for _, tt := range []struct {
		name, data, controller string
		unified                bool
		want                   string
		ok                     bool
	}{
		{"v1 memory", v1, "memory", false, "/process_api/abc", true},
		{"v1 cpuacct among joined controllers", v1, "cpuacct", false, "/cpu-path", true},
		{"v1 missing controller", v1, "pids", false, "", false},
		{"v2", "0::/system.slice/berth.service\n", "memory", true, "/system.slice/berth.service", true},
		{"v2 without a unified line", "4:memory:/x\n", "memory", true, "", false},
	} {
		got, ok := parseProcCgroup(tt.data, tt.unified, tt.controller)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s: parseProcCgroup = %q, %v; want %q, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}
