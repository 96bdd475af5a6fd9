// Package machine reads the facts about the host that the Node object
// reports: logical CPUs, memory, huge pages, swap, the machine, system and
// boot IDs, the kernel release, the OS image and the size of the filesystem
// that holds berth's root directory; and the per-CPU thermal_throttle
// directories that containers get masked.
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
// HostIPs (hostip.go) picks the node's IP when --node-ip is not given: the
// first global unicast address of the default route's interface.
package machine
