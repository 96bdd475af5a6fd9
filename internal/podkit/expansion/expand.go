package expansion

import (
	"strings"
	"unicode/utf8"
)

// Expand replaces $(VAR) references in s with vars[VAR], with the semantics
// of the Kubernetes API (command, args and env values):
//   - $(VAR) becomes the value of VAR when VAR is defined, else stays as is;
//   - $$ is an escaped $ and becomes a single $ (so $$(VAR) is literal);
//   - a $ followed by anything else, an unclosed $( and a trailing $ are
//     kept unchanged (an invalid UTF-8 byte right after a $ becomes U+FFFD,
//     as upstream).
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
			// As upstream: "$" and the rune after it, an invalid UTF-8
			// byte becoming U+FFFD.
			r, size := utf8.DecodeRuneInString(s[i+1:])
			b.WriteByte('$')
			b.WriteRune(r)
			i += size
		}
	}
	return b.String()
}
