// Package cgroupmath owns the cgroup arithmetic and the node settings it
// depends on, which containers (internal/pod/containerconfig), pod and QoS
// cgroups (internal/node/cm) and what berth reads back from the runtime
// (internal/pod/kuberuntime, internal/pod/podstatus) share, so each
// conversion has one home (STYLE rules 13 and 19):
//
//	cpu.go     cpu.shares from a CPU request and back (MilliCPUToShares,
//	           SharesToMilliCPU, MinShares, MaxShares), CFS quotas from a
//	           CPU limit and back (MilliCPUToQuota, QuotaToMilliCPU,
//	           QuotaPeriod, MinMilliCPULimit), and CFS, kubelet
//	           cpuCFSQuota and cpuCFSQuotaPeriod
//	memory.go  the cgroup v2 memory file names (MemoryMin, MemoryLow,
//	           MemoryHigh, SwapMax), the swap behaviours (NoSwap,
//	           LimitedSwap), MemorySettings and SwapSettings (memory QoS
//	           and swap settings, QoSEnforced, EffectivePageSize) and
//	           MemoryHighOf, KEP-2570's memory.high
//
// upstream_test.go pins the CPU numbers and memory_test.go the file names
// and swap behaviours to upstream's source (internal/testkit/upstreamsrc).
//
// It is pure: plain values in, plain values out; no files, no clock, no
// logging (internal/testkit/archtest holds that line). Which file a pod's
// or a container's cgroup gets is decided by its users.
package cgroupmath
