package main

import (
	"slices"
	"testing"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
)

// TestDirectives holds directives to upstream's order (dnsserver.Directives
// as the pinned release generates it) and to the plugins imported. (The
// imports register a few plugins more, which the packages imported
// import: debug, dnstap, metadata, prometheus, transfer; without a
// directive no Corefile can use them.)
func TestDirectives(t *testing.T) {
	upstream := dnsserver.Directives
	last := -1
	for _, d := range directives {
		i := slices.Index(upstream, d)
		if i < 0 {
			t.Errorf("directive %q is not upstream's", d)
			continue
		}
		if i < last {
			t.Errorf("directive %q is out of upstream's order", d)
		}
		last = i
	}
	registered := caddy.ListPlugins()["others"] // "dns.<name>"
	for _, d := range directives {
		if !slices.Contains(registered, "dns."+d) {
			t.Errorf("directive %q has no plugin imported (registered: %v)", d, registered)
		}
	}
}
