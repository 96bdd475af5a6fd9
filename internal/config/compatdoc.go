package config

import (
	"fmt"
	"strings"
)

// CompatDoc renders docs/config-compat.md: every flag and every top-level
// KubeletConfiguration field, with what berth does with it. A test keeps the
// committed file equal to this output.
func CompatDoc() string {
	var b strings.Builder
	b.WriteString("# berth configuration compatibility\n\n")
	b.WriteString("<!-- Generated from internal/config/support.go by " +
		"`go test ./internal/config -run TestCompatDoc -update`. Do not edit. -->\n\n")
	fmt.Fprintf(&b, "berth reads the upstream kubelet flags and `kubelet.config.k8s.io/v1beta1` "+
		"`KubeletConfiguration` of Kubernetes %s. Statuses:\n\n", KubernetesVersion)
	for _, s := range []Support{Honoured, Accepted, DefaultMatches, NotImplemented, ClusterOnly, Rejected} {
		fmt.Fprintf(&b, "- **%s**: %s\n", s, supportMeaning(s))
	}
	b.WriteString("\nLoading follows upstream: `--config` is decoded strictly (unknown or duplicate " +
		"fields, a wrong apiVersion or kind are errors) and defaulted; `--config-dir` `*.conf` drop-ins " +
		"(each a full KubeletConfiguration with apiVersion and kind, searched recursively, in lexical " +
		"order) are merged over it as JSON merge patches (objects merge, lists replace, null resets to " +
		"the default); flags given explicitly override the result. Relative paths in a file are resolved " +
		"against that file's directory. Every problem is reported at once.\n")
	b.WriteString("\n## Differences from upstream\n\n" +
		"- Decoding is always strict. Upstream retries a v1beta1 file leniently and only logs the strict error; " +
		"berth refuses the file, so a typo never turns into a silently ignored setting.\n" +
		"- Fields berth does not honour yet are refused when they differ from their default (see the table), " +
		"all reported in one error.\n" +
		"- Relative paths in a drop-in are resolved against the drop-in's directory.\n" +
		"- `--register-with-taints` fills berth's own node settings; the `registerWithTaints` field stays " +
		"default-only until berth registers a Node.\n" +
		"- The node name (hostname or `--hostname-override`, lower-cased) must be a DNS subdomain, since " +
		"static pod mirror names are built from it.\n")
	b.WriteString("\n## Flags\n\nEvery flag the upstream kubelet registers, under its upstream name, type and default. " +
		"A flag that sets a KubeletConfiguration field overrides the file and the drop-ins and has that field's status; " +
		"upstream deprecates most of them in favour of `--config`, and berth prints the same notice.\n\n" +
		"| flag | sets field | status | notes |\n| --- | --- | --- | --- |\n")
	fields := map[string]string{}
	for _, c := range configFlags() {
		fields["--"+c.Name] = "`" + c.Field + "`"
	}
	for _, f := range flagSupport() {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", f.Name, fields[f.Name], f.Support, f.Reason)
	}
	b.WriteString("\n`-v` is the short form of `--v`. `--version` (prints `berth <version> (kubelet " +
		KubernetesVersion + ")`) and `-h`/`--help` belong to the berth command itself. Unknown flags are " +
		"all reported at once, each with the nearest known flag, and flags upstream removed with the reason.\n")
	b.WriteString("\n## KubeletConfiguration fields\n\n| field | status | notes |\n| --- | --- | --- |\n")
	for _, f := range kubeletFieldSupport() {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", f.Name, f.Support, f.Reason)
	}
	return b.String()
}

func supportMeaning(s Support) string {
	switch s {
	case Honoured:
		return "every valid value takes effect."
	case DefaultMatches:
		return "only the upstream default is accepted, and the default is what berth does."
	case NotImplemented:
		return "only the upstream default is accepted; berth does not implement what the default describes yet."
	case ClusterOnly:
		return "accepted and validated; it takes effect once berth joins a cluster."
	case Rejected:
		return "an error whenever it is set."
	case Accepted:
		return "any valid value is accepted, but it has no effect: it configures only a feature that berth " +
			"refuses wherever a pod asks for it (the notes say which and how). berth logs a notice at start " +
			"when it is set."
	}
	return ""
}
