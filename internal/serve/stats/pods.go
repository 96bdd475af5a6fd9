package stats

import (
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// criSnapshot is what the runtime answered for one summary.
type criSnapshot struct {
	Sandboxes      []*runtimeapi.PodSandbox
	Containers     []*runtimeapi.Container
	ContainerStats []*runtimeapi.ContainerStats
	// SandboxStats may be empty when the runtime does not report them;
	// pod CPU and memory are then the sum of the containers'.
	SandboxStats []*runtimeapi.PodSandboxStats
}

// podInputs is everything buildPods looks at.
type podInputs struct {
	CRI criSnapshot
	// NanoCores are sampled CPU rates by container ID, used when the
	// runtime reports no usageNanoCores.
	NanoCores map[string]uint64
	// ImageFs gives container root filesystems their capacity; LogFs gives
	// logs theirs. Either may be nil.
	ImageFs, LogFs *statsapi.FsStats
	// Logs are the bytes and inodes of each container's log directory, by
	// container ID.
	Logs map[string]usage
	// Networks are the pods' networks read from their netns, by sandbox
	// ID, for when the runtime's sandbox stats give none (may be nil).
	Networks map[string]*statsapi.NetworkStats
	// Volumes are each pod's measured volumes by pod UID (may be nil).
	Volumes func(uid string) []volumeStat
	Now     time.Time
}

// usage is a disk usage.
type usage struct{ Bytes, Inodes uint64 }

// buildPods assembles the pods' stats from the runtime's answers, as
// upstream's CRI stats provider does: one entry per pod (its ready
// sandbox, else its newest), holding its running containers. It is pure.
func buildPods(in podInputs) []statsapi.PodStats {
	statsByID := map[string]*runtimeapi.ContainerStats{}
	for _, s := range in.CRI.ContainerStats {
		statsByID[s.GetAttributes().GetId()] = s
	}
	sandboxStats := map[string]*runtimeapi.PodSandboxStats{}
	for _, s := range in.CRI.SandboxStats {
		sandboxStats[s.GetAttributes().GetId()] = s
	}
	// One pass over the containers: a summary's cost grows with the
	// number of containers, not with pods times containers.
	bySandbox := map[string][]*runtimeapi.Container{}
	for _, c := range in.CRI.Containers {
		if c.GetState() == runtimeapi.ContainerState_CONTAINER_RUNNING {
			bySandbox[c.GetPodSandboxId()] = append(bySandbox[c.GetPodSandboxId()], c)
		}
	}
	var pods []statsapi.PodStats
	for _, sb := range pickSandboxes(in.CRI.Sandboxes) {
		md := sb.GetMetadata()
		ps := statsapi.PodStats{
			PodRef:     statsapi.PodReference{Name: md.GetName(), Namespace: md.GetNamespace(), UID: md.GetUid()},
			StartTime:  metav1.NewTime(time.Unix(0, sb.GetCreatedAt())),
			Containers: []statsapi.ContainerStats{},
		}
		for _, c := range bySandbox[sb.GetId()] {
			ps.Containers = append(ps.Containers, containerStats(c, statsByID[c.GetId()], in))
		}
		slices.SortFunc(ps.Containers, func(a, b statsapi.ContainerStats) int { return strings.Compare(a.Name, b.Name) })
		if s := sandboxStats[sb.GetId()]; s.GetLinux() != nil {
			ps.CPU = cpuStats(s.GetLinux().GetCpu(), 0)
			ps.Memory = memoryStats(s.GetLinux().GetMemory())
			ps.Network = networkStats(s.GetLinux().GetNetwork())
		}
		if ps.Network == nil {
			ps.Network = in.Networks[sb.GetId()]
		}
		if ps.CPU == nil || ps.Memory == nil {
			ps.CPU, ps.Memory = sumContainers(ps.Containers, in.Now)
		}
		ps.Swap = sumSwap(ps.Containers)
		var vols []volumeStat
		if in.Volumes != nil {
			vols = in.Volumes(md.GetUid())
		}
		for _, v := range vols {
			ps.VolumeStats = append(ps.VolumeStats, v.Stats)
		}
		ps.EphemeralStorage = ephemeralStorage(ps.Containers, vols, in.ImageFs, in.Now)
		pods = append(pods, ps)
	}
	slices.SortFunc(pods, func(a, b statsapi.PodStats) int {
		return strings.Compare(a.PodRef.Namespace+"/"+a.PodRef.Name, b.PodRef.Namespace+"/"+b.PodRef.Name)
	})
	return pods
}

// pickSandboxes keeps one sandbox per pod UID: a ready one, else the newest.
func pickSandboxes(all []*runtimeapi.PodSandbox) []*runtimeapi.PodSandbox {
	best := map[string]*runtimeapi.PodSandbox{}
	var order []string
	for _, sb := range all {
		uid := sb.GetMetadata().GetUid()
		cur, ok := best[uid]
		if !ok {
			order = append(order, uid)
		}
		if !ok || better(sb, cur) {
			best[uid] = sb
		}
	}
	out := make([]*runtimeapi.PodSandbox, 0, len(order))
	for _, uid := range order {
		out = append(out, best[uid])
	}
	return out
}

func better(a, b *runtimeapi.PodSandbox) bool {
	aReady := a.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY
	bReady := b.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY
	if aReady != bReady {
		return aReady
	}
	return a.GetCreatedAt() > b.GetCreatedAt()
}

// containerStats converts one running container and its CRI stats.
func containerStats(c *runtimeapi.Container, s *runtimeapi.ContainerStats, in podInputs) statsapi.ContainerStats {
	out := statsapi.ContainerStats{
		Name:      c.GetMetadata().GetName(),
		StartTime: metav1.NewTime(time.Unix(0, c.GetCreatedAt())),
	}
	if s == nil {
		return out
	}
	out.CPU = cpuStats(s.GetCpu(), in.NanoCores[c.GetId()])
	out.Memory = memoryStats(s.GetMemory())
	if wl := s.GetWritableLayer(); wl != nil {
		out.Rootfs = withCapacity(in.ImageFs, time.Unix(0, wl.GetTimestamp()), wl.GetUsedBytes().GetValue(), wl.GetInodesUsed().GetValue())
	}
	out.Swap = swapStats(s.GetSwap(), in.Now)
	if u, ok := in.Logs[c.GetId()]; ok {
		out.Logs = withCapacity(in.LogFs, in.Now, u.Bytes, u.Inodes)
	}
	return out
}

// cpuStats converts CRI CPU usage; sampled is used when the runtime gives
// no usageNanoCores (zero: none sampled yet).
func cpuStats(c *runtimeapi.CpuUsage, sampled uint64) *statsapi.CPUStats {
	if c == nil {
		return nil
	}
	out := &statsapi.CPUStats{Time: metav1.NewTime(time.Unix(0, c.GetTimestamp()))}
	if v := c.GetUsageCoreNanoSeconds(); v != nil {
		out.UsageCoreNanoSeconds = ptr(v.GetValue())
	}
	switch {
	case c.GetUsageNanoCores() != nil:
		out.UsageNanoCores = ptr(c.GetUsageNanoCores().GetValue())
	case sampled > 0:
		out.UsageNanoCores = ptr(sampled)
	}
	return out
}

// memoryStats converts CRI memory usage.
func memoryStats(m *runtimeapi.MemoryUsage) *statsapi.MemoryStats {
	if m == nil {
		return nil
	}
	out := &statsapi.MemoryStats{Time: metav1.NewTime(time.Unix(0, m.GetTimestamp()))}
	set := func(dst **uint64, v *runtimeapi.UInt64Value) {
		if v != nil {
			*dst = ptr(v.GetValue())
		}
	}
	set(&out.WorkingSetBytes, m.GetWorkingSetBytes())
	set(&out.UsageBytes, m.GetUsageBytes())
	set(&out.RSSBytes, m.GetRssBytes())
	set(&out.AvailableBytes, m.GetAvailableBytes())
	set(&out.PageFaults, m.GetPageFaults())
	set(&out.MajorPageFaults, m.GetMajorPageFaults())
	return out
}

// networkStats converts CRI network usage: the default interface first.
func networkStats(n *runtimeapi.NetworkUsage) *statsapi.NetworkStats {
	if n == nil || n.GetDefaultInterface() == nil {
		return nil
	}
	conv := func(i *runtimeapi.NetworkInterfaceUsage) statsapi.InterfaceStats {
		return statsapi.InterfaceStats{
			Name:    i.GetName(),
			RxBytes: ptr(i.GetRxBytes().GetValue()), RxErrors: ptr(i.GetRxErrors().GetValue()),
			TxBytes: ptr(i.GetTxBytes().GetValue()), TxErrors: ptr(i.GetTxErrors().GetValue()),
		}
	}
	out := &statsapi.NetworkStats{Time: metav1.NewTime(time.Unix(0, n.GetTimestamp())), InterfaceStats: conv(n.GetDefaultInterface())}
	for _, i := range n.GetInterfaces() {
		out.Interfaces = append(out.Interfaces, conv(i))
	}
	return out
}

// swapStats converts CRI swap usage; a runtime that reports none gives
// zeros, as upstream.
func swapStats(s *runtimeapi.SwapUsage, now time.Time) *statsapi.SwapStats {
	if s == nil {
		return &statsapi.SwapStats{Time: metav1.NewTime(now), SwapUsageBytes: ptr(0), SwapAvailableBytes: ptr(0)}
	}
	out := &statsapi.SwapStats{Time: metav1.NewTime(time.Unix(0, s.GetTimestamp()))}
	if v := s.GetSwapUsageBytes(); v != nil {
		out.SwapUsageBytes = ptr(v.GetValue())
	}
	if v := s.GetSwapAvailableBytes(); v != nil {
		out.SwapAvailableBytes = ptr(v.GetValue())
	}
	return out
}

// sumSwap is the pod's swap: the sum of its containers' (the CRI has no
// pod-level swap), nil when no container reports any.
func sumSwap(cs []statsapi.ContainerStats) *statsapi.SwapStats {
	var out *statsapi.SwapStats
	for _, c := range cs {
		if c.Swap == nil {
			continue
		}
		if out == nil {
			out = &statsapi.SwapStats{Time: c.Swap.Time, SwapUsageBytes: ptr(0), SwapAvailableBytes: ptr(0)}
		}
		*out.SwapUsageBytes += deref(c.Swap.SwapUsageBytes)
		*out.SwapAvailableBytes += deref(c.Swap.SwapAvailableBytes)
	}
	return out
}

// sumContainers adds up the containers' CPU and memory for a pod whose
// runtime gives no sandbox stats.
func sumContainers(cs []statsapi.ContainerStats, now time.Time) (*statsapi.CPUStats, *statsapi.MemoryStats) {
	cpu := &statsapi.CPUStats{Time: metav1.NewTime(now)}
	mem := &statsapi.MemoryStats{Time: metav1.NewTime(now)}
	add := func(dst **uint64, v *uint64) {
		if v != nil {
			*dst = ptr(deref(*dst) + *v)
		}
	}
	for _, c := range cs {
		if c.CPU != nil {
			add(&cpu.UsageCoreNanoSeconds, c.CPU.UsageCoreNanoSeconds)
			add(&cpu.UsageNanoCores, c.CPU.UsageNanoCores)
		}
		if c.Memory != nil {
			add(&mem.WorkingSetBytes, c.Memory.WorkingSetBytes)
			add(&mem.UsageBytes, c.Memory.UsageBytes)
			add(&mem.RSSBytes, c.Memory.RSSBytes)
		}
	}
	return cpu, mem
}

// ephemeralStorage is the pod's use of the node's ephemeral storage, as
// upstream sums it: the containers' writable layers and logs plus the
// local ephemeral volumes (emptyDir on disk, configMap).
func ephemeralStorage(cs []statsapi.ContainerStats, vols []volumeStat, fs *statsapi.FsStats, now time.Time) *statsapi.FsStats {
	var bytes, inodes uint64
	add := func(u *statsapi.FsStats) {
		if u != nil {
			bytes += deref(u.UsedBytes)
			inodes += deref(u.InodesUsed)
		}
	}
	for _, c := range cs {
		add(c.Rootfs)
		add(c.Logs)
	}
	for _, v := range vols {
		if v.Ephemeral {
			add(&v.Stats.FsStats)
		}
	}
	return withCapacity(fs, now, bytes, inodes)
}

// withCapacity is a usage on the filesystem fs (whose capacity,
// availability and inodes it copies; fs may be nil).
func withCapacity(fs *statsapi.FsStats, at time.Time, used, inodesUsed uint64) *statsapi.FsStats {
	out := &statsapi.FsStats{Time: metav1.NewTime(at), UsedBytes: ptr(used), InodesUsed: ptr(inodesUsed)}
	if fs != nil {
		out.CapacityBytes, out.AvailableBytes, out.Inodes, out.InodesFree = fs.CapacityBytes, fs.AvailableBytes, fs.Inodes, fs.InodesFree
	}
	return out
}

func ptr(v uint64) *uint64 { return &v }

func deref(v *uint64) uint64 {
	if v == nil {
		return 0
	}
	return *v
}
