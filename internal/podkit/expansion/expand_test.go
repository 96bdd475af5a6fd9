package expansion

import "testing"

func TestExpand(t *testing.T) {
	vars := map[string]string{"VAR_A": "A", "VAR_B": "B", "EMPTY": "", "DOLLAR": "$"}
	tests := []struct {
		name, in, want string
	}{
		{"no references", "plain", "plain"},
		{"whole", "$(VAR_A)", "A"},
		{"inside", "x-$(VAR_A)-y", "x-A-y"},
		{"two", "$(VAR_A)$(VAR_B)", "AB"},
		{"undefined kept", "$(NOPE)", "$(NOPE)"},
		{"empty value", "a$(EMPTY)b", "ab"},
		{"escaped", "$$(VAR_A)", "$(VAR_A)"},
		{"double escape then ref", "$$$(VAR_A)", "$A"},
		{"lone dollar dollar", "$$", "$"},
		{"trailing dollar", "abc$", "abc$"},
		{"dollar other", "$VAR_A", "$VAR_A"},
		{"unclosed", "$(VAR_A", "$(VAR_A"},
		{"reference name runs to the first paren", "$($(VAR_A)", "$($(VAR_A)"},
		{"empty name", "$()", "$()"},
		{"value not re-expanded", "$(DOLLAR)(VAR_A)", "$(VAR_A)"},
		{"nested parens", "$(VAR_A))", "A)"},
		{"only dollar", "$", "$"},
		{"dollar before a multi-byte rune", "$é$(VAR_A)", "$éA"},
		{"dollar before an invalid byte", "$\xc3x", "$\uFFFDx"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Expand(tt.in, vars); got != tt.want {
				t.Errorf("Expand(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
