package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseConfigs(t *testing.T) {
	tests := []struct {
		in   string
		want []string // nil: refused
	}{
		{"shared,defaults", []string{"shared", "defaults"}},
		{"defaults, shared", []string{"defaults", "shared"}},
		{"shared", []string{"shared"}},
		{"shared,shared", nil},
		{"tuned", nil},
		{"", nil},
	}
	for _, tt := range tests {
		got, err := parseConfigs(tt.in)
		if tt.want == nil {
			if err == nil {
				t.Errorf("parseConfigs(%q) = %v, want an error", tt.in, got)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseConfigs(%q): %v", tt.in, err)
		} else if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("parseConfigs(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}
