// Package machine reads the facts about the host that the Node object
// reports: logical CPUs, memory, huge pages, swap, the machine, system and
// boot IDs, the kernel release, the OS image and the size of the filesystem
// that holds berth's root directory; and the per-CPU thermal_throttle
// directories that containers get masked; and the host's NUMA and CPU
// topology, which the resource managers share.
//
// The parsers (parse.go) are pure functions over file contents, tested with
// tables over testdata; Read (read.go) is the thin part that opens the
// files through a Host, which tests replace.
//
// What is read follows cadvisor, which the upstream kubelet uses:
// /proc/cpuinfo (logical CPUs), /proc/meminfo (MemTotal, SwapTotal),
// /sys/kernel/mm/hugepages, /etc/machine-id or /var/lib/dbus/machine-id,
// /sys/class/dmi/id/product_uuid (absent or unreadable in many VMs: then
// empty, as upstream), /proc/sys/kernel/random/boot_id, uname's release,
// PRETTY_NAME of /etc/os-release (or /usr/lib/os-release; "Linux" when it
// has none) and statfs of the root directory. The thermal_throttle
// directories are found as upstream's securitycontext finds them: one per
// CPU of /sys/devices/system/cpu/possible (all CPUs when unreadable), if it
// exists (pinned by a test that reads upstream). Whether the kernel
// accounts swap per cgroup is upstream's swap controller check: the v1
// memory root's memory.memsw.limit_in_bytes, or memory.swap.max in the v2
// cgroup /proc/self/cgroup names.
//
// ReadTopology (topology.go) is the one reader of the host's NUMA and CPU
// topology, from an fs.FS rooted at /sys/devices/system: the online CPUs
// (socket, core, NUMA node, uncore cache) and the NUMA nodes (CPUs,
// MemTotal, huge pages, distances), every file read through one bounded
// helper. The CPU, topology and memory managers take what they need from
// its Topology; a host without node/ is one node 0 holding every CPU and
// the memory Read found, so all three agree.
//
// HostIPs (hostip.go) picks the node's IP when --node-ip is not given: the
// first global unicast address of the default route's interface.
package machine
