package stats

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"google.golang.org/grpc"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// Runtime is what the provider asks the CRI runtime service. The
// generated client (cri.Client.Runtime) implements it.
type Runtime interface {
	ListPodSandbox(ctx context.Context, in *runtimeapi.ListPodSandboxRequest, opts ...grpc.CallOption) (*runtimeapi.ListPodSandboxResponse, error)
	ListContainers(ctx context.Context, in *runtimeapi.ListContainersRequest, opts ...grpc.CallOption) (*runtimeapi.ListContainersResponse, error)
	ListContainerStats(ctx context.Context, in *runtimeapi.ListContainerStatsRequest, opts ...grpc.CallOption) (*runtimeapi.ListContainerStatsResponse, error)
	ListPodSandboxStats(ctx context.Context, in *runtimeapi.ListPodSandboxStatsRequest, opts ...grpc.CallOption) (*runtimeapi.ListPodSandboxStatsResponse, error)
	PodSandboxStatus(ctx context.Context, in *runtimeapi.PodSandboxStatusRequest, opts ...grpc.CallOption) (*runtimeapi.PodSandboxStatusResponse, error)
}

// Images is what the provider asks the CRI image service.
type Images interface {
	ImageFsInfo(ctx context.Context, in *runtimeapi.ImageFsInfoRequest, opts ...grpc.CallOption) (*runtimeapi.ImageFsInfoResponse, error)
}

// Config is what New needs.
type Config struct {
	Runtime Runtime
	Images  Images
	// NodeName names the node in the summary.
	NodeName string
	// RootDir is berth's root directory: its filesystem is the node's.
	RootDir string
	// PodLogsDir holds the pods' container logs.
	PodLogsDir string
	// ProcRoot and CgroupRoot default to /proc and /sys/fs/cgroup.
	ProcRoot, CgroupRoot string
	// Clock stamps and paces the samples (required).
	Clock clock.WithTicker
	// SamplePeriod defaults to DefaultSamplePeriod.
	SamplePeriod time.Duration
	// PodsDir holds the pods' directories (<uid>/volumes/...); it defaults
	// to RootDir/pods.
	PodsDir string
	// VolumeStatsAggPeriod is how often pod volumes are measured
	// (volumeStatsAggPeriod); it defaults to DefaultVolumeStatsAggPeriod.
	// Upstream turns volume stats off when it is zero or less: so does
	// berth when VolumeStatsOff is set.
	VolumeStatsAggPeriod time.Duration
	VolumeStatsOff       bool
	// Volumes lists the claim and CSI volumes of pods, measured by their
	// plugin (nil: only the volumes measured from their directories).
	Volumes VolumeLister
	// CSI asks CSI drivers for their volumes' usage (nil: CSI volumes
	// have no stats).
	CSI CSIStats
	// SystemCgroups names system containers' cgroups (paths from the
	// hierarchy's root) by upstream's names ("runtime", "misc"); "kubelet"
	// defaults to berth's own cgroup and "pods" to the kubepods cgroup
	// when it exists.
	SystemCgroups map[string]string
}

// Provider computes the stats summary. Run owns the CPU sampler; Summary
// is safe for concurrent use and reads only published samples.
type Provider struct {
	cfg     Config
	node    nodeReader
	sampler *sampler
	// volumes is nil when volume stats are off.
	volumes *volumeCache
	// procs caches the sandboxes' processes for their netns.
	procs sandboxProcs
}

// New validates cfg and returns a Provider. It starts nothing.
func New(cfg Config) (*Provider, error) {
	if cfg.Runtime == nil || cfg.Images == nil || cfg.NodeName == "" || cfg.RootDir == "" || cfg.PodLogsDir == "" {
		return nil, errors.New("create stats provider: Runtime, Images, NodeName, RootDir and PodLogsDir are required")
	}
	if cfg.ProcRoot == "" {
		cfg.ProcRoot = "/proc"
	}
	if cfg.CgroupRoot == "" {
		cfg.CgroupRoot = "/sys/fs/cgroup"
	}
	if cfg.Clock == nil {
		return nil, errors.New("new stats provider: Clock is required")
	}
	if cfg.SamplePeriod <= 0 {
		cfg.SamplePeriod = DefaultSamplePeriod
	}
	if cfg.PodsDir == "" {
		cfg.PodsDir = filepath.Join(cfg.RootDir, "pods")
	}
	if cfg.VolumeStatsAggPeriod <= 0 {
		cfg.VolumeStatsAggPeriod = DefaultVolumeStatsAggPeriod
	}
	p := &Provider{cfg: cfg, node: nodeReader{proc: cfg.ProcRoot, cgroup: cfg.CgroupRoot}}
	p.sampler = &sampler{clock: cfg.Clock, period: cfg.SamplePeriod, read: p.cpuCounters}
	if !cfg.VolumeStatsOff {
		p.volumes = &volumeCache{podsDir: cfg.PodsDir, clock: cfg.Clock, period: cfg.VolumeStatsAggPeriod}
		if cfg.Volumes != nil {
			p.volumes.plugins = &pluginVolumes{podsDir: cfg.PodsDir, lister: cfg.Volumes, csi: cfg.CSI,
				callTimeout: csiCallTimeout(cfg.VolumeStatsAggPeriod)}
		}
	}
	return p, nil
}

// Run samples CPU usage every SamplePeriod and measures pod volumes every
// VolumeStatsAggPeriod until ctx ends.
func (p *Provider) Run(ctx context.Context) error {
	if p.volumes == nil {
		return p.sampler.Run(ctx)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = p.volumes.Run(ctx)
	}()
	err := p.sampler.Run(ctx)
	<-done
	return err
}

// cpuCounters reads the node's and every container's cumulative CPU time.
func (p *Provider) cpuCounters(ctx context.Context) map[string]uint64 {
	out := map[string]uint64{}
	if ns, err := p.node.cpuUsage(); err == nil {
		out[nodeKey] = ns
	} else {
		klog.FromContext(ctx).V(2).Info("Cannot read node CPU usage", "err", err)
	}
	for _, sc := range p.systemCgroups() {
		if ns, err := p.node.cgroupCPU(sc.path.cpu); err == nil {
			out[systemKey(sc.name)] = ns
		}
	}
	resp, err := p.cfg.Runtime.ListContainerStats(ctx, &runtimeapi.ListContainerStatsRequest{})
	if err != nil {
		klog.FromContext(ctx).V(2).Info("Cannot list container stats", "err", err)
		return out
	}
	for _, s := range resp.GetStats() {
		if v := s.GetCpu().GetUsageCoreNanoSeconds(); v != nil {
			out[s.GetAttributes().GetId()] = v.GetValue()
		}
	}
	return out
}

// Summary returns the node's and pods' stats now. onlyCPUAndMemory keeps
// just the CPU and memory figures (?only_cpu_and_memory=true).
func (p *Provider) Summary(ctx context.Context, onlyCPUAndMemory bool) (*statsapi.Summary, error) {
	sum, _, err := p.summary(ctx, onlyCPUAndMemory)
	return sum, err
}

// summary is Summary and the runtime's answers it was built from.
func (p *Provider) summary(ctx context.Context, onlyCPUAndMemory bool) (*statsapi.Summary, criSnapshot, error) {
	now := p.cfg.Clock.Now()
	snap, err := p.listCRI(ctx, onlyCPUAndMemory)
	if err != nil {
		return nil, snap, err
	}
	in := podInputs{CRI: snap, NanoCores: p.sampler.Rates(), Now: now}
	var imageFs, containerFs *statsapi.FsStats
	if !onlyCPUAndMemory {
		imageFs, containerFs = p.runtimeFs(ctx, now)
		in.ImageFs = containerFs
		in.LogFs, _ = statfs(p.cfg.PodLogsDir, now)
		in.Logs = p.logUsage(snap.Containers)
		if !sandboxNetworks(snap.SandboxStats) {
			in.Networks = p.podNetworks(ctx, pickSandboxes(snap.Sandboxes), now)
		}
		if p.volumes != nil {
			in.Volumes = p.volumes.Volumes
		}
	}
	sum := &statsapi.Summary{Node: p.nodeStats(ctx, now, onlyCPUAndMemory), Pods: buildPods(in)}
	if !onlyCPUAndMemory && imageFs != nil {
		sum.Node.Runtime = &statsapi.RuntimeStats{ImageFs: imageFs, ContainerFs: containerFs}
	}
	if onlyCPUAndMemory {
		keepCPUAndMemory(sum)
	}
	return sum, snap, nil
}

// listCRI asks the runtime for sandboxes, containers and their stats.
// Sandbox stats are optional (older runtimes lack them).
func (p *Provider) listCRI(ctx context.Context, skipSandboxStats bool) (criSnapshot, error) {
	var snap criSnapshot
	sbs, err := p.cfg.Runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return snap, fmt.Errorf("list pod sandboxes: %w", err)
	}
	cs, err := p.cfg.Runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{})
	if err != nil {
		return snap, fmt.Errorf("list containers: %w", err)
	}
	st, err := p.cfg.Runtime.ListContainerStats(ctx, &runtimeapi.ListContainerStatsRequest{})
	if err != nil {
		return snap, fmt.Errorf("list container stats: %w", err)
	}
	snap.Sandboxes, snap.Containers, snap.ContainerStats = sbs.GetItems(), cs.GetContainers(), st.GetStats()
	if !skipSandboxStats {
		if ps, err := p.cfg.Runtime.ListPodSandboxStats(ctx, &runtimeapi.ListPodSandboxStatsRequest{}); err == nil {
			snap.SandboxStats = ps.GetStats()
		} else {
			klog.FromContext(ctx).V(4).Info("Cannot list pod sandbox stats; summing containers", "err", err)
		}
	}
	return snap, nil
}

// nodeStats reads the node's own figures; a figure that cannot be read is
// left out (and logged).
func (p *Provider) nodeStats(ctx context.Context, now time.Time, onlyCPUAndMemory bool) statsapi.NodeStats {
	logger := klog.FromContext(ctx)
	ns := statsapi.NodeStats{NodeName: p.cfg.NodeName}
	if boot, err := p.node.bootTime(); err == nil {
		ns.StartTime = metav1.NewTime(boot)
	}
	// The node's cumulative CPU is stamped with the time it is read, not
	// the summary's start: the runtime's answers come first and take their
	// time, and a consumer that divides the CPU used between two
	// summaries by the time between them (metrics-server, for `kubectl
	// top node`) would count that delay's variation as usage.
	read := p.cfg.Clock.Now()
	if usage, err := p.node.cpuUsage(); err == nil {
		ns.CPU = &statsapi.CPUStats{Time: metav1.NewTime(read), UsageCoreNanoSeconds: ptr(usage)}
		if rate, ok := p.sampler.Rates()[nodeKey]; ok {
			ns.CPU.UsageNanoCores = ptr(rate)
		}
	} else {
		logger.V(2).Info("Cannot read node CPU usage", "err", err)
	}
	if m, err := p.node.memory(); err == nil {
		ns.Memory = &statsapi.MemoryStats{
			Time: metav1.NewTime(read), AvailableBytes: ptr(m.Available), UsageBytes: ptr(m.Usage),
			WorkingSetBytes: ptr(m.WorkingSet), RSSBytes: ptr(m.RSS),
			PageFaults: ptr(m.PageFaults), MajorPageFaults: ptr(m.MajorPageFaults),
		}
		ns.Swap = &statsapi.SwapStats{Time: metav1.NewTime(read), SwapUsageBytes: ptr(m.SwapUsage), SwapAvailableBytes: ptr(m.SwapAvailable)}
	} else {
		logger.V(2).Info("Cannot read node memory", "err", err)
	}
	ns.SystemContainers = p.systemContainers(ctx, now)
	if onlyCPUAndMemory {
		return ns
	}
	var err error
	if ns.Fs, err = statfs(p.cfg.RootDir, now); err != nil {
		logger.V(2).Info("Cannot read node filesystem", "err", err)
	}
	if ns.Rlimit, err = p.node.rlimit(now); err != nil {
		logger.V(2).Info("Cannot read node process limits", "err", err)
	}
	if ns.Network, err = p.node.network(now); err != nil {
		logger.V(2).Info("Cannot read node network", "err", err)
	}
	return ns
}

// ImageFsStats reports the runtime's image filesystem as /stats/summary
// does (usage from ImageFsInfo, capacity and availability from statfs of
// its mount point), as upstream's stats provider serves its image GC. It
// is an error when the runtime or the filesystem cannot be read.
func (p *Provider) ImageFsStats(ctx context.Context) (*statsapi.FsStats, error) {
	resp, err := p.cfg.Images.ImageFsInfo(ctx, &runtimeapi.ImageFsInfoRequest{})
	if err != nil {
		return nil, fmt.Errorf("read image filesystem info: %w", err)
	}
	fss := resp.GetImageFilesystems()
	if len(fss) == 0 {
		return nil, errors.New("read image filesystem info: the runtime reports no image filesystem")
	}
	now := p.cfg.Clock.Now()
	fs, err := statfs(fss[0].GetFsId().GetMountpoint(), now)
	if err != nil {
		return nil, err
	}
	return withCapacity(fs, time.Unix(0, fss[0].GetTimestamp()), fss[0].GetUsedBytes().GetValue(), fss[0].GetInodesUsed().GetValue()), nil
}

// runtimeFs returns the runtime's image filesystem and container
// filesystem (the image filesystem when the runtime does not split them):
// usage from ImageFsInfo, capacity from statfs of its mount point.
func (p *Provider) runtimeFs(ctx context.Context, now time.Time) (image, container *statsapi.FsStats) {
	resp, err := p.cfg.Images.ImageFsInfo(ctx, &runtimeapi.ImageFsInfoRequest{})
	if err != nil {
		klog.FromContext(ctx).V(2).Info("Cannot read image filesystem info", "err", err)
		return nil, nil
	}
	conv := func(u *runtimeapi.FilesystemUsage) *statsapi.FsStats {
		if u == nil {
			return nil
		}
		fs, err := statfs(u.GetFsId().GetMountpoint(), now)
		if err != nil {
			fs = nil
		}
		return withCapacity(fs, time.Unix(0, u.GetTimestamp()), u.GetUsedBytes().GetValue(), u.GetInodesUsed().GetValue())
	}
	if fss := resp.GetImageFilesystems(); len(fss) > 0 {
		image = conv(fss[0])
	}
	container = image
	if fss := resp.GetContainerFilesystems(); len(fss) > 0 {
		container = conv(fss[0])
	}
	return image, container
}

// logUsage measures each running container's log directory
// (<pod logs>/<namespace>_<name>_<uid>/<container>).
func (p *Provider) logUsage(containers []*runtimeapi.Container) map[string]usage {
	out := map[string]usage{}
	for _, c := range containers {
		if c.GetState() != runtimeapi.ContainerState_CONTAINER_RUNNING {
			continue
		}
		l := c.GetLabels()
		podDir := podutil.LogDir(p.cfg.PodLogsDir, l["io.kubernetes.pod.namespace"], l["io.kubernetes.pod.name"], types.UID(l["io.kubernetes.pod.uid"]))
		bytes, inodes := dirUsage(filepath.Join(podDir, c.GetMetadata().GetName()))
		out[c.GetId()] = usage{Bytes: bytes, Inodes: inodes}
	}
	return out
}

// sandboxNetworks reports whether the runtime's sandbox stats carry the
// pods' networks.
func sandboxNetworks(stats []*runtimeapi.PodSandboxStats) bool {
	for _, s := range stats {
		if s.GetLinux().GetNetwork() != nil {
			return true
		}
	}
	return false
}

// keepCPUAndMemory strips everything but CPU and memory, as upstream's
// only_cpu_and_memory summary.
func keepCPUAndMemory(s *statsapi.Summary) {
	s.Node = statsapi.NodeStats{NodeName: s.Node.NodeName, StartTime: s.Node.StartTime, CPU: s.Node.CPU, Memory: s.Node.Memory, Swap: s.Node.Swap,
		SystemContainers: s.Node.SystemContainers}
	for i := range s.Pods {
		pod := &s.Pods[i]
		*pod = statsapi.PodStats{PodRef: pod.PodRef, StartTime: pod.StartTime, Containers: pod.Containers, CPU: pod.CPU, Memory: pod.Memory, Swap: pod.Swap}
		for j := range pod.Containers {
			c := &pod.Containers[j]
			*c = statsapi.ContainerStats{Name: c.Name, StartTime: c.StartTime, CPU: c.CPU, Memory: c.Memory, Swap: c.Swap}
		}
	}
}
