package expansion

import "strings"

// Expand replaces $(VAR) references in s with vars[VAR], with the semantics
// of the Kubernetes API (command, args and env values):
//   - $(VAR) becomes the value of VAR when VAR is defined, else stays as is;
//   - $$ is an escaped $ and becomes a single $ (so $$(VAR) is literal);
//   - a $ followed by anything else, an unclosed $( and a trailing $ are
//     kept unchanged.
func Expand(s string, vars map[string]string) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch next := s[i+1]; next {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				// Unclosed reference: keep "$(" and go on after it.
				b.WriteString("$(")
				i++
				continue
			}
			name := s[i+2 : i+2+end]
			if v, ok := vars[name]; ok {
				b.WriteString(v)
			} else {
				b.WriteString("$(" + name + ")")
			}
			i += 2 + end
		default:
			b.WriteByte('$')
			b.WriteByte(next)
			i++
		}
	}
	return b.String()
}
