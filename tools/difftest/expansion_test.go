package difftest

import (
	"testing"

	upstream "k8s.io/kubernetes/third_party/forked/golang/expansion"

	"github.com/berthk8s/berth/internal/podkit/expansion"
)

// FuzzExpandUpstream: berth's Expand gives what upstream's Expand with
// MappingFuncFor gives, for any input and any two variables.
func FuzzExpandUpstream(f *testing.F) {
	f.Fuzz(func(t *testing.T, s, name1, value1, name2, value2 string) {
		vars := map[string]string{name1: value1, name2: value2}
		got := expansion.Expand(s, vars)
		want := upstream.Expand(s, upstream.MappingFuncFor(vars))
		if got != want {
			t.Fatalf("Expand(%q, %q) = %q, upstream %q", s, vars, got, want)
		}
	})
}
