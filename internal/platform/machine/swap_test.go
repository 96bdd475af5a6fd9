package machine

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

func TestParseSwapsOn(t *testing.T) {
	const header = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
	tests := []struct {
		name string
		data string
		want bool
	}{
		{"empty", "", false},
		{"header only", header, false},
		{"header only, no newline", "Filename Type Size Used Priority", false},
		{"a swap file", header + "/swapfile file 2097148 0 -2\n", true},
		{"two devices", header + "/dev/sda2 partition 8388604 0 -2\n/dev/zram0 partition 1000 0 100\n", true},
	}
	for _, tc := range tests {
		if got := ParseSwapsOn([]byte(tc.data)); got != tc.want {
			t.Errorf("%s: ParseSwapsOn = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestCheckSwap is the failSwapOn decision; the message is upstream's.
func TestCheckSwap(t *testing.T) {
	src := upstreamsrc.New(t)
	var upstreamMsg string
	for _, call := range src.Func("k8s.io/kubernetes/pkg/kubelet/cm", "NewContainerManager").Calls("fmt", "Errorf") {
		if m := call.Arg(0).AsString(); len(m) > 0 && m[:12] == "running with" {
			upstreamMsg = m
		}
	}
	if upstreamMsg == "" {
		t.Fatal("upstream's NewContainerManager has no swap refusal message any more")
	}
	for _, tc := range []struct {
		fail, on bool
		wantErr  bool
	}{{true, true, true}, {true, false, false}, {false, true, false}, {false, false, false}} {
		err := CheckSwap(tc.fail, Info{SwapOn: tc.on})
		if (err != nil) != tc.wantErr {
			t.Errorf("failSwapOn=%v swapOn=%v: err = %v, want error %v", tc.fail, tc.on, err, tc.wantErr)
		}
		if err != nil && err.Error() != upstreamMsg {
			t.Errorf("message = %q, upstream's = %q", err, upstreamMsg)
		}
	}
}

// TestCheckCgroupV1 is the failCgroupV1 decision; the message is upstream's
// (pkg/kubelet/apis/config/validation's linux check).
func TestCheckCgroupV1(t *testing.T) {
	src := upstreamsrc.New(t)
	var upstreamMsg string
	for _, call := range src.Func("k8s.io/kubernetes/pkg/kubelet/apis/config/validation", "validateKubeletOSConfiguration").Calls("fmt", "Errorf") {
		if m := call.Arg(0).AsString(); strings.Contains(m, "cgroup v1") && !strings.Contains(m, "singleProcessOOMKill") {
			upstreamMsg = m
		}
	}
	if upstreamMsg == "" {
		t.Fatal("upstream's validateKubeletOSConfiguration has no cgroup v1 refusal message any more")
	}
	for _, tc := range []struct {
		fail, v1 bool
		wantErr  bool
	}{{true, true, true}, {true, false, false}, {false, true, false}, {false, false, false}} {
		err := CheckCgroupV1(tc.fail, Info{CgroupV2: !tc.v1})
		if (err != nil) != tc.wantErr {
			t.Errorf("failCgroupV1=%v v1=%v: err = %v, want error %v", tc.fail, tc.v1, err, tc.wantErr)
		}
		if err != nil && err.Error() != upstreamMsg {
			t.Errorf("message = %q, upstream's = %q", err, upstreamMsg)
		}
	}
}

// TestSwapController is upstream's swap controller check over fake
// hosts: the v1 memory root's memsw file, or memory.swap.max in the v2
// cgroup /proc/self/cgroup names.
func TestSwapController(t *testing.T) {
	self := "0::/system.slice/berth.service\n"
	for _, tt := range []struct {
		name  string
		v2    bool
		files fstest.MapFS
		want  bool
	}{
		{"v1 with memsw", false, fstest.MapFS{"sys/fs/cgroup/memory/memory.memsw.limit_in_bytes": file("9223372036854771712\n")}, true},
		{"v1 without memsw", false, fstest.MapFS{}, false},
		{"v2, own cgroup has memory.swap.max", true, fstest.MapFS{
			"proc/self/cgroup": file(self),
			"sys/fs/cgroup/system.slice/berth.service/memory.swap.max": file("max\n"),
		}, true},
		{"v2, only the root has it", true, fstest.MapFS{
			"proc/self/cgroup":              file(self),
			"sys/fs/cgroup/memory.swap.max": file("max\n"),
		}, false},
		{"v2, v1 file only", true, fstest.MapFS{"sys/fs/cgroup/memory/memory.memsw.limit_in_bytes": file("1\n")}, false},
	} {
		h := mapHost(tt.files, nil)
		if got := swapController(h, tt.v2); got != tt.want {
			t.Errorf("%s: swapController = %t, want %t", tt.name, got, tt.want)
		}
	}
}

func TestParseUnifiedCgroup(t *testing.T) {
	for in, want := range map[string]string{
		"0::/user.slice\n":                       "/user.slice",
		"12:memory:/x\n0::/\n":                   "/",
		"12:memory:/x\n":                         "",
		"1:name=systemd:/a\n0::/kubepods/pod1\n": "/kubepods/pod1",
	} {
		if got, _ := ParseUnifiedCgroup(in); got != want {
			t.Errorf("ParseUnifiedCgroup(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCheckLimitedSwap is upstream's LimitedSwap refusal on cgroup v1; the
// message is upstream's (its kubelet's run).
func TestCheckLimitedSwap(t *testing.T) {
	src := upstreamsrc.New(t)
	var upstreamMsg string
	for _, call := range src.Func("k8s.io/kubernetes/cmd/kubelet/app", "run").Calls("fmt", "Errorf") {
		if m := call.Arg(0).AsString(); strings.Contains(m, "LimitedSwap") {
			upstreamMsg = m
		}
	}
	if upstreamMsg == "" {
		t.Fatal("upstream's kubelet run has no LimitedSwap refusal message any more")
	}
	for _, tc := range []struct {
		behavior string
		v2       bool
		wantErr  bool
	}{{"LimitedSwap", false, true}, {"LimitedSwap", true, false}, {"NoSwap", false, false}, {"", false, false}} {
		err := CheckLimitedSwap(tc.behavior, Info{CgroupV2: tc.v2})
		if (err != nil) != tc.wantErr {
			t.Errorf("%q v2=%v: err = %v, want error %v", tc.behavior, tc.v2, err, tc.wantErr)
		}
		if err != nil && err.Error() != upstreamMsg {
			t.Errorf("message = %q, upstream's = %q", err, upstreamMsg)
		}
	}
}
