package archtest

// Wing is one of the groups internal/ is made of (STYLE rule 19): what
// the packages under internal/<Name> are for, and which other wings their
// non-test files may import. A package imports anything of its own wing.
// Test files may import any wing but app: a test may build the real
// collaborator (a metrics registry, a volume manager) where production
// code is handed it by the wiring.
type Wing struct {
	Name string
	// May lists the other wings its packages may import.
	May []string
}

// Wings is the house's map, lowest first: a wing may import only wings
// above it in this list, so the wings form no cycle. wings_test.go holds
// every import of internal/ and cmd/ to it, and .golangci.yml's depguard
// rules are generated from it (lint_test.go).
var Wings = []Wing{
	// Pure helpers several wings share: QoS class, pod requests, cgroup
	// math, the small predicates, the runtime state snapshot types.
	{Name: "podkit"},
	// Adapters to the host and the runtime: CRI, machine facts, the
	// runtime's log files, checkpoint files, sd_notify, iptables, tracing.
	{Name: "platform", May: []string{"podkit"}},

	// Image pulls' credentials and records.
	{Name: "images", May: []string{"podkit", "platform"}},
	// The node's guards and resource managers: cgroups, CPU, memory and
	// topology managers, eviction, GC, log rotation, shutdown, user
	// namespaces. They never import the pod path.
	{Name: "node", May: []string{"podkit", "platform"}},
	// Volumes: what a pod mounts and the API objects its volumes and
	// environment are made of.
	{Name: "volumes", May: []string{"podkit", "platform"}},
	// Loading, defaulting and validating the configuration. It asks the
	// managers that own an option's table (CPU, memory and topology
	// managers, credential providers, pull records) whether a value is
	// valid.
	{Name: "config", May: []string{"podkit", "platform", "images", "node"}},
	// The pod path: source → sync loop → worker → sync → plan → runtime →
	// status, with admission, allocation, the prober, the PLEG and
	// housekeeping.
	{Name: "pod", May: []string{"podkit", "platform", "images", "node", "volumes"}},
	// The cluster side: the Node and its Lease, pod status writes, mirror
	// pods, certificates, events, API clients.
	{Name: "cluster", May: []string{"podkit", "platform", "config", "pod"}},
	// The servers: the kubelet API, streaming, logs, stats, metrics.
	{Name: "serve", May: []string{"podkit", "platform", "config", "volumes", "pod"}},
	// berth simulate's application model and what performs it on a
	// simulated node's in-memory runtime and prober.
	{Name: "sim", May: []string{"podkit", "platform", "pod"}},
	// The wiring: builds every wing from the configuration, starts them in
	// order and stops them in reverse. It decides nothing.
	{Name: "app", May: []string{"podkit", "platform", "config", "images", "node", "volumes", "pod", "cluster", "serve", "sim"}},
	// Test support and the architecture tests: imported by tests only.
	{Name: "testkit"},
}

// CmdMay is what cmd/berth may import: the wiring, the configuration and
// the few platform adapters that run before the agent (host set-up, the
// lock file).
var CmdMay = []string{"app", "config", "platform"}
