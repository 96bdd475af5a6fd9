package stats

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestParseKeyValues(t *testing.T) {
	got := parseKeyValues("usage_usec 10\nbad line here\nneg -1\nsome avg10=0.00\nuser_usec 7\n")
	if diff := cmp.Diff(map[string]uint64{"usage_usec": 10, "user_usec": 7}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestParseMeminfo(t *testing.T) {
	got := parseMeminfo("MemTotal:       1000 kB\nHugePages_Total:       2\nbroken\n")
	if diff := cmp.Diff(map[string]uint64{"MemTotal": 1024000, "HugePages_Total": 2}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	mi := parseMeminfo(readTestdata(t, "meminfo"))
	if mi["MemTotal"] == 0 || mi["MemFree"] == 0 || mi["MemFree"] > mi["MemTotal"] {
		t.Errorf("testdata meminfo parsed as %v", mi)
	}
}

func TestParseBootTime(t *testing.T) {
	if got, err := parseBootTime("cpu  1 2 3\nbtime 1795373299\nprocesses 9\n"); err != nil || got != 1795373299 {
		t.Errorf("parseBootTime = %d, %v", got, err)
	}
	if _, err := parseBootTime("cpu 1\n"); err == nil {
		t.Error("parseBootTime without btime succeeded")
	}
}

func TestParseUint(t *testing.T) {
	if v, err := parseUint("9580716032\n"); err != nil || v != 9580716032 {
		t.Errorf("parseUint = %d, %v", v, err)
	}
	if _, err := parseUint("max\n"); err == nil {
		t.Error("parseUint(max) succeeded")
	}
}

func TestMemory(t *testing.T) {
	const gi = 1 << 30
	tests := []struct {
		name string
		got  memory
		want memory
	}{
		{
			name: "v1 root cgroup from testdata",
			got: memoryV1(func() uint64 { v, _ := parseUint(readTestdata(t, "v1/memory.usage_in_bytes")); return v }(),
				parseKeyValues(readTestdata(t, "v1/memory.stat")), 24*gi),
			want: memory{Usage: 9580716032, WorkingSet: 9580716032 - 3487203328, RSS: 669097984,
				PageFaults: 224010578, MajorPageFaults: 138971, Available: 24*gi - (9580716032 - 3487203328)},
		},
		{
			name: "v1 inactive file above usage",
			got:  memoryV1(100, map[string]uint64{"total_inactive_file": 200}, 1000),
			want: memory{Usage: 100, Available: 1000},
		},
		{
			name: "v2 root from meminfo and memory.stat",
			got: memoryV2(map[string]uint64{"MemTotal": 10 * gi, "MemFree": 4 * gi},
				parseKeyValues(readTestdata(t, "v2/memory.stat"))),
			want: memory{Usage: 6 * gi, WorkingSet: 6*gi - 3487203328, RSS: 669097984,
				PageFaults: 224010578, MajorPageFaults: 138971, Available: 4*gi + 3487203328},
		},
		{
			name: "v2 working set above capacity",
			got:  memoryV2(map[string]uint64{"MemTotal": 10, "MemFree": 20}, nil),
			want: memory{Available: 10},
		},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tt.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestCPUV2(t *testing.T) {
	if ns, ok := cpuV2(parseKeyValues(readTestdata(t, "v2/cpu.stat"))); !ok || ns != 11096224000*1000 {
		t.Errorf("cpuV2 = %d, %v", ns, ok)
	}
	if _, ok := cpuV2(map[string]uint64{}); ok {
		t.Error("cpuV2 without usage_usec succeeded")
	}
}

func TestParseMemoryLimit(t *testing.T) {
	type result struct {
		Limit uint64
		OK    bool
	}
	tests := []struct {
		data string
		want result
	}{
		{"10000\n", result{10000, true}},
		{"4611686018427387904\n", result{1 << 62, true}},
		{"9223372036854771712\n", result{}}, // v1 "no limit"
		{"max\n", result{}},                 // v2 "no limit"
		{"", result{}},
	}
	for _, tt := range tests {
		var got result
		got.Limit, got.OK = parseMemoryLimit(tt.data)
		if got != tt.want {
			t.Errorf("parseMemoryLimit(%q) = %+v, want %+v", tt.data, got, tt.want)
		}
	}
}
