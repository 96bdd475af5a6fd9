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
