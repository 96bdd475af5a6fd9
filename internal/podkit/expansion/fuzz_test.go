package expansion

import (
	"strings"
	"testing"
)

// escape doubles every $, which Expand turns back into one.
func escape(s string) string { return strings.ReplaceAll(s, "$", "$$") }

// FuzzExpand: Expand never panics, leaves a string without $ alone,
// undoes escape for any text, and in escaped text replaces a reference to
// a defined variable (a name without ")") by its value and nothing else.
// The comparison with upstream's implementation is in tools/difftest.
func FuzzExpand(f *testing.F) {
	f.Fuzz(func(t *testing.T, s, name, value string) {
		vars := map[string]string{name: value}
		got := Expand(s, vars)
		if !strings.Contains(s, "$") && got != s {
			t.Fatalf("Expand(%q) = %q, want it unchanged", s, got)
		}
		if got := Expand(escape(s), vars); got != s {
			t.Fatalf("Expand(%q) = %q, want %q", escape(s), got, s)
		}
		if strings.Contains(name, ")") {
			return
		}
		in := escape(s) + "$(" + name + ")" + escape(value)
		if got, want := Expand(in, vars), s+value+value; got != want {
			t.Fatalf("Expand(%q, %q=%q) = %q, want %q", in, name, value, got, want)
		}
	})
}
