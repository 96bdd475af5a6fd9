// Package simbench measures berth's node simulation side by side with
// kwok and kubemark's hollow nodes (issue 28, item 5): `make simbench`
// (hack/simbench.sh, the command cmd/simbench) runs each simulator at each
// size (100, 500 and 1000 nodes by default) against a loopback control
// plane of its own (test/cluster, with the API server's audit log), one
// after the other, and prints a markdown table that it also writes, with
// the raw results as JSON, under _output/simbench/. It reports; it
// asserts nothing.
//
//	make simbench                                    # all three, 100/500/1000 nodes, 10 pods a node
//	make simbench SIMBENCH_ARGS="-sizes 5,20 -window 20s"
//	hack/simbench.sh -simulators berth -sizes 50 -berth-args "--pod-watch shared"
//
// One run (a simulator at a size):
//
//  1. a fresh control plane; the pods' namespace and its service account;
//  2. the simulator started: bin/berth simulate --nodes N (one process);
//     kwok (one process) with the Stages kwokctl hands it by default
//     (tools/kwok's kwok-stages) on the Nodes the harness creates with
//     kwok's annotation; or one kubemark --morph=kubelet process a node,
//     each with its node's kubeconfig, as upstream's hollow-node template
//     runs them (but with the fake image service: upstream's default is
//     the host's containerd, which this harness never touches), with
//     fs.inotify.max_user_instances raised to 1000 for the run as that
//     template's init container does (and put back after; this needs
//     root when the limit is lower);
//  3. the time to all N nodes Ready, from the simulator's start (for kwok,
//     its start and the Nodes' creation);
//  4. after -settle, the idle window (-window): the RSS (the per-second
//     sums of the processes' VmRSS, their mean) and CPU time of all the
//     simulator's processes (test/bench's /proc reader), their PSS (every
//     5 s, from smaps_rollup), the share of the machine's CPU other
//     processes used (test/bench's idle check), and the simulator's API
//     requests in the window;
//  5. -pods-per-node bare pods a node (spec.nodeName set, so the scheduler
//     is not measured; registry.k8s.io/pause:3.10, which no simulator
//     pulls for real; no service account token), created 16 at a time,
//     and the time from the first creation to all Running;
//  6. after -settle, the busy window, measured as the idle one.
//
// The table gives, per node, RSS in MiB, CPU in thousandths of a core,
// and API requests a minute. The API requests are counted from the audit
// log (test/bench's CountRequests) by the simulator's identity: berth
// simulate and kwok run with client certificates of their own
// (simbench:berth, simbench:kwok, in system:masters), each hollow node as
// system:node:<name>; the harness's requests and the control plane's are
// not counted. kwok renews its Leases every 10 s
// (--node-lease-duration-seconds=40), as berth and the hollow kubelets do.
// RSS is summed per process: for kubemark the binary's shared pages count
// once a hollow node (as they would in upstream's one pod a node), so the
// table gives PSS too, which counts them once in all: what the nodes cost
// this machine. For berth and kwok, one process each, the two are close.
//
// Memory: before a size, a simulator whose earlier, smaller run measured
// more PSS per node than MemAvailable less -mem-floor-mib (4 GiB) holds
// for this size is not started, and its row says "did not fit: ~X MiB a
// node" (X the PSS a node);
// a guard reads MemAvailable every 500 ms during each run and stops the
// run that takes it under the floor, with the same note and what it
// measured (kubemark's first size has no estimate: it is started and
// stopped by the guard if it does not fit). Every process a run starts is
// in a process group of its own and stopped (SIGTERM, SIGKILL after 10 s)
// at the end of the run, on failure and on Ctrl-C; every directory is
// removed, the hollow kubelets' own under /tmp (named in their logs) too.
//
// Files:
//
//	config.go    Config, the simulators, parsing of -sizes and -simulators (pure)
//	result.go    Result and Window, the per-node arithmetic, milestones (pure)
//	table.go     the markdown table and the conditions under it (pure)
//	identity.go  node names, each simulator's identity, the audit log's filter and count
//	fit.go       MemAvailable, the memory estimate per node and the fit check (pure but for the read)
//	guard.go     the memory guard of a run
//	proc.go      one child process: process group, log, stop
//	procset.go   the processes of a run; an unexpected exit fails it
//	launch.go    starting berth simulate, kwok (and its Nodes) and the hollow nodes
//	inotify.go   upstream's inotify limit for the hollow nodes, and putting it back
//	wait.go      waiting for nodes Ready and pods Running, each one's arrival recorded
//	pods.go      the pods' namespace and the pods
//	measure.go   one measuring window, sums over the processes
//	pss.go       the processes' PSS, from /proc/<pid>/smaps_rollup (parsing is pure)
//	outcome.go   a run's status from how it ended (timeouts, the memory floor, exits)
//	run.go       Run: every size and simulator, one run from start to request counts
package simbench
