// Package cm is berth's container manager: the cgroup hierarchy pods run
// in, as upstream's kubelet lays it out with cgroupsPerQOS.
//
//	<cgroupRoot>/kubepods               node allocatable (capacity - reserved, or capacity)
//	<cgroupRoot>/kubepods/pod<uid>      a Guaranteed pod
//	<cgroupRoot>/kubepods/burstable     cpu shares: the sum of its pods' cpu requests
//	<cgroupRoot>/kubepods/burstable/pod<uid>
//	<cgroupRoot>/kubepods/besteffort    cpu shares: 2
//	<cgroupRoot>/kubepods/besteffort/pod<uid>
//
// With the systemd driver the same names are slices
// (kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid_with_underscores>.slice).
// The pod cgroup is what the runtime gets as the sandbox's cgroup_parent.
//
// Files:
//
//	name.go       cgroup names and their cgroupfs and systemd forms (pure)
//	resources.go  what each cgroup is set to: pods, node allocatable,
//	              reserved cgroups; cpu.weight from cpu shares (pure; the
//	              shares, quota and memory arithmetic containers share is
//	              internal/podkit/cgroupmath's)
//	memory.go     memory QoS of pod, QoS class and reserved cgroups
//	              (memory.min, memory.low, pod-level memory.high on cgroup
//	              v2) and what the QoS classes are set to (ForQOS: cpu
//	              shares, TieredReservation, qosReserved memory limits)
//	              (pure)
//	config.go     the manager's configuration and its checks (pure)
//	cgroupfs.go   the edge: creating, setting, listing and removing cgroups
//	              through github.com/opencontainers/cgroups (v1, v2, cgroupfs
//	              and systemd drivers)
//	manager.go    Manager: the hierarchy at start (resetting stale memory
//	              protection on v2), a pod's cgroup before its sandbox, the
//	              QoS classes as pods come and go, orphan removal,
//	              node allocatable retried until it is enforced
//	process.go    EnsureProcess: berth itself into kubeletCgroups
//	system.go     SystemCgroup: the root cgroup's processes (but init and
//	              kernel threads) into systemCgroups, at start and every
//	              minute
//
// The decisions (which cgroup a pod lands in and what it is set to) are pure
// functions with table tests pinned to upstream's helpers; only cgroupfs.go
// touches the machine.
package cm
