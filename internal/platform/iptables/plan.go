package iptables

// Family is an IP family, which picks the binary: iptables or ip6tables.
type Family string

// The IP families, in the order upstream sets them up.
const (
	IPv4 Family = "IPv4"
	IPv6 Family = "IPv6"
)

// The chains and tables of upstream's kubelet (pkg/kubelet and
// pkg/util/iptables).
const (
	HintChain     = "KUBE-IPTABLES-HINT"
	FirewallChain = "KUBE-FIREWALL"
	CanaryChain   = "KUBE-KUBELET-CANARY"

	TableMangle = "mangle"
	TableNAT    = "nat"
	TableFilter = "filter"
)

// Rule positions: the iptables option that adds the rule.
const (
	Prepend = "-I"
	Append  = "-A"
)

// Step is one thing to make sure of: a chain exists (Rule nil), or a rule
// exists in a chain (added at Position when missing).
type Step struct {
	Table, Chain string
	// Position is Prepend or Append, for a rule.
	Position string
	// Rule is the rule's match and target arguments; nil for a chain.
	Rule []string
}

// UtilChains returns upstream's syncIPTablesRules for one family, in its
// order: the hint chain, then (IPv4 only: IPv6 has no route_localnet
// hole) the firewall chain, the jumps to it and its localnet rule.
func UtilChains(f Family) []Step {
	steps := []Step{{Table: TableMangle, Chain: HintChain}}
	if f == IPv6 {
		return steps
	}
	return append(steps,
		Step{Table: TableFilter, Chain: FirewallChain},
		Step{Table: TableFilter, Chain: "OUTPUT", Position: Prepend, Rule: []string{"-j", FirewallChain}},
		Step{Table: TableFilter, Chain: "INPUT", Position: Prepend, Rule: []string{"-j", FirewallChain}},
		Step{Table: TableFilter, Chain: FirewallChain, Position: Append, Rule: []string{
			"-m", "comment", "--comment", "block incoming localnet connections",
			"--dst", "127.0.0.0/8",
			"!", "--src", "127.0.0.0/8",
			"-m", "conntrack",
			"!", "--ctstate", "RELATED,ESTABLISHED,DNAT",
			"-j", "DROP",
		}},
	)
}

// CanaryTables are the tables the canary chain is made in; the first is
// the one watched.
func CanaryTables() []string { return []string{TableMangle, TableNAT, TableFilter} }
