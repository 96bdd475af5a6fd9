package bench

import (
	"strings"
	"testing"
)

func TestTable(t *testing.T) {
	measures := []Measure{
		{Key: "ready", Title: "start to Ready", Unit: "s", Dist: true},
		{Key: "size", Title: "binary size", Unit: "MiB"},
	}
	s := Samples{}
	s.Add("ready", ColBerth, 1, 2, 3)
	s.Add("ready", ColUpstream, 4, 4, 8)
	s.Add("size", ColBerth, 30)
	s.Add("size", ColUpstream, 90)
	got := Table(measures, s)
	lines := strings.Split(strings.TrimRight(got, "\n"), "\n")
	if len(lines) != 6 {
		t.Fatalf("Table has %d lines, want a header and 5 rows:\n%s", len(lines), got)
	}
	want := [][]string{
		{"figure", "unit", "berth", "upstream", "berth/upstream", "floor", "(CRI)"},
		{"start", "to", "Ready", "(median)", "s", "2", "4", "0.5", "-"},
		{"start", "to", "Ready", "(p50)", "s", "2", "4", "0.5", "-"},
		{"start", "to", "Ready", "(p99)", "s", "3", "8", "0.375", "-"},
		{"start", "to", "Ready", "(max)", "s", "3", "8", "0.375", "-"},
		{"binary", "size", "MiB", "30", "90", "0.3333", "-"},
	}
	for i, line := range lines {
		if f := strings.Fields(line); strings.Join(f, " ") != strings.Join(want[i], " ") {
			t.Errorf("line %d = %q, want fields %q", i, line, want[i])
		}
	}
}

// TestRepeatTable: one row per burst size, repeat and statistic; the
// floor once, then each configuration's kubelets and their ratio.
func TestRepeatTable(t *testing.T) {
	shared, defaults := Samples{}, Samples{}
	for _, s := range []Samples{shared, defaults} {
		s.Add(repeatKey(30, 1), ColFloor, 1, 1, 1, 2)
	}
	shared.Add(repeatKey(30, 1), ColBerth, 2, 2, 3, 4)
	shared.Add(repeatKey(30, 1), ColUpstream, 4, 4, 4, 8)
	defaults.Add(repeatKey(30, 1), ColBerth, 3, 3, 3, 3)
	got := RepeatTable([]int{30}, 2, []string{ConfigShared, ConfigDefaults}, map[string]Samples{ConfigShared: shared, ConfigDefaults: defaults})
	lines := strings.Split(strings.TrimRight(got, "\n"), "\n")
	want := [][]string{
		{"pods", "repeat", "stat", "(s)", "floor", "(CRI)", "shared:", "berth", "shared:", "upstream", "shared:", "ratio",
			"defaults:", "berth", "defaults:", "upstream", "defaults:", "ratio"},
		{"30", "1", "p50", "1", "2", "4", "0.5", "3", "-", "-"},
		{"30", "1", "p90", "2", "4", "8", "0.5", "3", "-", "-"},
		{"30", "1", "p99", "2", "4", "8", "0.5", "3", "-", "-"},
		{"30", "1", "max", "2", "4", "8", "0.5", "3", "-", "-"},
		{"30", "2", "p50", "-", "-", "-", "-", "-", "-", "-"},
		{"30", "2", "p90", "-", "-", "-", "-", "-", "-", "-"},
		{"30", "2", "p99", "-", "-", "-", "-", "-", "-", "-"},
		{"30", "2", "max", "-", "-", "-", "-", "-", "-", "-"},
	}
	if len(lines) != len(want) {
		t.Fatalf("RepeatTable has %d lines, want %d:\n%s", len(lines), len(want), got)
	}
	for i, line := range lines {
		if f := strings.Fields(line); strings.Join(f, " ") != strings.Join(want[i], " ") {
			t.Errorf("line %d = %q, want fields %q", i, line, want[i])
		}
	}
}

func TestHeapTable(t *testing.T) {
	got := HeapTable([]HeapPoint{{Config: ConfigDefaults, Pods: 10, File: "heap-defaults-10.pb.gz", InuseMiB: 12.5,
		Top: []HeapEntry{{Func: "a.f", Bytes: 3 << 20}, {Func: "b.g", Bytes: 1 << 19}}}})
	want := "berth heap, defaults, 10 pods: 12.5 MiB in use (heap-defaults-10.pb.gz)\n" +
		"  3 MiB    a.f\n" +
		"  0.5 MiB  b.g\n"
	if got != want {
		t.Errorf("HeapTable =\n%s\nwant\n%s", got, want)
	}
}
