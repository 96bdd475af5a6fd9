package iptables

import (
	"go/ast"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

const upstreamKubelet = "k8s.io/kubernetes/pkg/kubelet"

// TestUtilChainsMatchUpstream reads upstream's syncIPTablesRules: its
// EnsureChain and EnsureRule calls, in order, are UtilChains(IPv4).
func TestUtilChainsMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	fn := src.Func(upstreamKubelet, "syncIPTablesRules")
	var got []Step
	for _, call := range fn.CallsTo(func(x, f string) bool { return x == "iptClient" && (f == "EnsureChain" || f == "EnsureRule") }) {
		got = append(got, stepOf(call))
	}
	if diff := cmp.Diff(got, UtilChains(IPv4)); diff != "" {
		t.Errorf("UtilChains(IPv4) differs from upstream's syncIPTablesRules (-upstream +berth):\n%s", diff)
	}
}

// TestCanaryMatchesUpstream reads the Monitor call of upstream's
// initNetworkUtil: the canary chain and its tables.
func TestCanaryMatchesUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	calls := src.Func(upstreamKubelet, "initNetworkUtil").CallsTo(func(x, f string) bool { return x == "iptClient" && f == "Monitor" })
	if len(calls) != 1 {
		t.Fatalf("upstream initNetworkUtil calls Monitor %d times, want 1", len(calls))
	}
	if got := calls[0].Arg(0).AsString(); got != CanaryChain {
		t.Errorf("CanaryChain %q, upstream %q", CanaryChain, got)
	}
	if diff := cmp.Diff(calls[0].Arg(1).AsStrings(), CanaryTables()); diff != "" {
		t.Errorf("CanaryTables differ from upstream (-upstream +berth):\n%s", diff)
	}
}

// stepOf turns upstream's EnsureChain(table, chain) or
// EnsureRule(position, table, chain, rule...) into a Step.
func stepOf(call upstreamsrc.Node) Step {
	n := len(call.Node.(*ast.CallExpr).Args)
	if n == 2 {
		return Step{Table: call.Arg(0).AsString(), Chain: call.Arg(1).AsString()}
	}
	s := Step{Position: call.Arg(0).AsString(), Table: call.Arg(1).AsString(), Chain: call.Arg(2).AsString(), Rule: []string{}}
	for i := 3; i < n; i++ {
		s.Rule = append(s.Rule, call.Arg(i).AsString())
	}
	return s
}
