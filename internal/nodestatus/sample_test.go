package nodestatus

import "testing"

func TestSplitReason(t *testing.T) {
	tests := []struct{ in, reason, message string }{
		{"NetworkPluginNotReady: cni config uninitialized", "NetworkPluginNotReady", "cni config uninitialized"},
		{"no reason given", "", "no reason given"},
		{"", "", ""},
		{"A: b: c", "A", "b: c"},
	}
	for _, tc := range tests {
		r, m := splitReason(tc.in)
		if r != tc.reason || m != tc.message {
			t.Errorf("splitReason(%q) = %q, %q; want %q, %q", tc.in, r, m, tc.reason, tc.message)
		}
	}
}
