// Package appmodel is the application model of berth simulate: what a
// simulated container does, read from its pod's annotations, and pure
// functions of the container's age (time since it started) that say what
// it answers and when it exits. It performs nothing; simdriver does.
//
// Annotations (all optional; a key with ".<container>" appended applies
// to that container only and wins over the key without):
//
//	sim.berth.dev/ready-after          duration   readiness probes fail until the container is this old (default 0)
//	sim.berth.dev/started-after        duration   startup probes fail until the container is this old (default 0)
//	sim.berth.dev/liveness-fail-after  duration   liveness probes fail once the container is this old (default never)
//	sim.berth.dev/run-for              duration   the container exits when this old (default never)
//	sim.berth.dev/exit-code            integer    the exit code it exits with (default 0)
//	sim.berth.dev/memory               quantity   memory use at start (default 0)
//	sim.berth.dev/memory-per-minute    quantity   memory growth per minute of age (default 0)
//
// Durations are Go durations ("30s", "2m"), quantities Kubernetes ones
// ("64Mi"). A value that does not parse is reported and left at its
// default; the rest of the annotations still apply.
package appmodel
