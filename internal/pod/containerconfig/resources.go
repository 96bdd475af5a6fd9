package containerconfig

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/berthk8s/berth/internal/podkit/cgroupmath"
	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// OOM score adjustments by QoS class (upstream pkg/kubelet/qos/policy.go).
const (
	guaranteedOOMScoreAdj = -997
	besteffortOOMScoreAdj = 1000
	// systemNodeCritical is the priority class that makes a critical pod
	// (podutil.IsCritical) node-critical.
	systemNodeCritical = "system-node-critical"
)

// ResourceSettings are the node settings every Linux resources value
// (container, sandbox, overhead) is built with: kubelet cpuCFSQuota,
// cpuCFSQuotaPeriod and singleProcessOOMKill. The zero value enforces
// quotas over cgroupmath.QuotaPeriod and leaves memory.oom.group alone.
type ResourceSettings struct {
	CFS cgroupmath.CFS
	// OOMGroup sets memory.oom.group=1, so an OOM kill takes the whole
	// container: upstream does so on cgroup v2 unless singleProcessOOMKill
	// is true (OOMGroup decides it).
	OOMGroup bool
	// Memory decides containers' memory QoS and swap
	// (ContainerMemoryQoS); sandboxes and overhead do not use it.
	Memory cgroupmath.MemorySettings
}

// OOMGroup is upstream's one decision on memory.oom.group: only on a
// cgroup v2 host, and there unless singleProcessOOMKill is true (unset
// means false there). On cgroup v1 a single process is always killed.
func OOMGroup(cgroupV2 bool, singleProcessOOMKill *bool) bool {
	return cgroupV2 && (singleProcessOOMKill == nil || !*singleProcessOOMKill)
}

// linuxResources is upstream calculateLinuxResources: cpu shares from the
// request (from the limit when there is no request), the CFS quota and
// period from the limit when quotas are enforced, the memory limit and,
// with s.OOMGroup, memory.oom.group.
func linuxResources(cpuRequest *resource.Quantity, cpuLimit, memoryLimit resource.Quantity, s ResourceSettings) *runtimeapi.LinuxContainerResources {
	shares := cgroupmath.MilliCPUToShares(cpuLimit.MilliValue())
	if cpuRequest != nil {
		shares = cgroupmath.MilliCPUToShares(cpuRequest.MilliValue())
	}
	r := &runtimeapi.LinuxContainerResources{
		CpuShares:          shares,
		MemoryLimitInBytes: memoryLimit.Value(),
	}
	if quota, period, enforced := s.CFS.Quota(cpuLimit.MilliValue()); enforced {
		r.CpuQuota, r.CpuPeriod = quota, period
	}
	if s.OOMGroup {
		r.Unified = map[string]string{"memory.oom.group": "1"}
	}
	return r
}

// containerResources builds the Linux resources of a container (upstream
// generateLinuxContainerResources): linuxResources, the OOM score
// adjustment of its QoS class, its huge page limits, its memory QoS
// and swap (ContainerMemoryQoS) and the CPU manager's cpuset.
//
// Guaranteed containers get -997. containerd clamps a negative value to
// its own oom_score_adj when it runs without CAP_SYS_RESOURCE
// (restrict_oom_score_adj), so the value is safe to send everywhere.
func containerResources(pod *corev1.Pod, c *corev1.Container, node Node, cpuset string) *runtimeapi.LinuxContainerResources {
	var cpuRequest *resource.Quantity
	if q, ok := c.Resources.Requests[corev1.ResourceCPU]; ok {
		cpuRequest = &q
	}
	cpuLimit, memoryLimit := podutil.EffectiveLimits(c.Resources, pod.Spec.Resources)
	r := linuxResources(cpuRequest, cpuLimit, memoryLimit, node.Resources)
	r.OomScoreAdj = oomScoreAdjust(pod, c, node.MemoryCapacity)
	r.HugepageLimits = hugepageLimits(c.Resources.Limits, node.HugePageSizes)
	mem := ContainerMemoryQoS(pod, c, r.MemoryLimitInBytes, node.Resources.Memory)
	r.MemorySwapLimitInBytes = mem.SwapLimit
	for k, v := range mem.Unified {
		if r.Unified == nil {
			r.Unified = map[string]string{}
		}
		r.Unified[k] = v
	}
	r.CpusetCpus = cpuset
	return r
}

// ResizedResources is what an in-place resize sends a running container
// (UpdateContainerResources): the Linux resources it would be created with
// now, with the CPU and memory managers' cpusets.
func ResizedResources(pod *corev1.Pod, c *corev1.Container, node Node, cpuset, cpusetMems string) *runtimeapi.LinuxContainerResources {
	r := containerResources(pod, c, node, cpuset)
	r.CpusetMems = cpusetMems
	return r
}

// isNodeCritical is upstream IsNodeCriticalPod: a critical pod (static,
// mirror or of system-critical priority) of the system-node-critical class.
func isNodeCritical(pod *corev1.Pod) bool {
	if pod.Spec.PriorityClassName != systemNodeCritical {
		return false
	}
	return podutil.IsCritical(pod)
}

// oomScoreAdjust is upstream GetContainerOOMScoreAdjust: -997 for
// node-critical and Guaranteed pods, 1000 for BestEffort, and for
// Burstable 1000 - 1000*memoryRequest/capacity kept within [3, 999]. A
// sidecar (restartable init container) scores no higher than the regular
// container with the smallest memory request.
func oomScoreAdjust(pod *corev1.Pod, c *corev1.Container, memoryCapacity int64) int64 {
	if isNodeCritical(pod) {
		return guaranteedOOMScoreAdj
	}
	switch podQOS(pod) {
	case corev1.PodQOSGuaranteed:
		return guaranteedOOMScoreAdj
	case corev1.PodQOSBestEffort:
		return besteffortOOMScoreAdj
	}
	score := func(request int64) int64 {
		if memoryCapacity <= 0 {
			return besteffortOOMScoreAdj
		}
		return 1000 - 1000*request/memoryCapacity
	}
	adj := score(c.Resources.Requests.Memory().Value())
	if podutil.IsSidecarIn(&pod.Spec, c) {
		if minRequest := minRegularMemoryRequest(pod); minRequest != 0 {
			adj = min(adj, score(minRequest))
		}
	}
	if adj < 1000+guaranteedOOMScoreAdj {
		return 1000 + guaranteedOOMScoreAdj
	}
	if adj == besteffortOOMScoreAdj {
		return adj - 1
	}
	return adj
}

// podQOS is upstream's GetPodQOS, which upstream's kuberuntime asks: the
// class the pod's status records, or the one its resources give
// (podutil.QOSClass, upstream's ComputePodQOS).
func podQOS(pod *corev1.Pod) corev1.PodQOSClass {
	if pod.Status.QOSClass != "" {
		return pod.Status.QOSClass
	}
	return podutil.QOSClass(pod)
}

// minRegularMemoryRequest is the smallest non-zero memory request of the
// pod's regular containers, 0 if none has one.
func minRegularMemoryRequest(pod *corev1.Pod) int64 {
	var least int64
	for i := range pod.Spec.Containers {
		if r := pod.Spec.Containers[i].Resources.Requests.Memory().Value(); r != 0 && (least == 0 || r < least) {
			least = r
		}
	}
	return least
}

// hugePageSizeName writes a page size in bytes the way the CRI and the
// kernel's cgroup files name it: "2MB", "1GB", "64KB".
func hugePageSizeName(bytes int64) string {
	units := []string{"B", "KB", "MB", "GB", "TB", "PB"}
	i := 0
	for bytes >= 1024 && bytes%1024 == 0 && i < len(units)-1 {
		bytes /= 1024
		i++
	}
	return strconv.FormatInt(bytes, 10) + units[i]
}

// hugepageLimits limits every huge page size of the node to 0, except the
// sizes the container has a hugepages-<size> limit for (upstream
// GetHugepageLimitsFromResources). Sizes the node lacks are dropped.
func hugepageLimits(limits corev1.ResourceList, sizes []int64) []*runtimeapi.HugepageLimit {
	asked := map[string]uint64{}
	for name, q := range limits {
		size, ok := hugePageSize(name)
		if !ok {
			continue
		}
		asked[hugePageSizeName(size)] = uint64(q.Value())
	}
	var out []*runtimeapi.HugepageLimit
	for _, size := range sizes {
		name := hugePageSizeName(size)
		out = append(out, &runtimeapi.HugepageLimit{PageSize: name, Limit: asked[name]})
	}
	return out
}

// hugePageSize parses the page size of a hugepages-<size> resource name.
func hugePageSize(name corev1.ResourceName) (int64, bool) {
	const prefix = corev1.ResourceHugePagesPrefix
	if len(name) <= len(prefix) || string(name[:len(prefix)]) != prefix {
		return 0, false
	}
	q, err := resource.ParseQuantity(string(name[len(prefix):]))
	if err != nil || q.Value() <= 0 {
		return 0, false
	}
	return q.Value(), true
}

// overheadResources are the Linux resources of the pod's overhead, treated
// as Guaranteed: requests equal limits (upstream
// convertOverheadToLinuxResources). No overhead gives an empty value.
func overheadResources(pod *corev1.Pod, s ResourceSettings) *runtimeapi.LinuxContainerResources {
	if pod.Spec.Overhead == nil {
		return &runtimeapi.LinuxContainerResources{}
	}
	cpu := pod.Spec.Overhead.Cpu()
	return linuxResources(cpu, *cpu, *pod.Spec.Overhead.Memory(), s)
}

// sandboxResources are the Linux resources of the whole pod, overhead
// excluded (upstream calculateSandboxResources over PodRequests and
// PodLimits).
func sandboxResources(pod *corev1.Pod, s ResourceSettings) *runtimeapi.LinuxContainerResources {
	requests := podTotal(pod, func(r corev1.ResourceRequirements) corev1.ResourceList { return r.Requests })
	limits := podTotal(pod, func(r corev1.ResourceRequirements) corev1.ResourceList { return r.Limits })
	var cpuRequest *resource.Quantity
	if q, ok := requests[corev1.ResourceCPU]; ok {
		cpuRequest = &q
	}
	return linuxResources(cpuRequest, *limits.Cpu(), *limits.Memory(), s)
}

// podTotal sums one side (requests or limits) of the pod's cpu and memory
// as upstream's resource helpers do: regular containers and sidecars add
// up; each other init container counts with the sidecars started before
// it, and the pod needs the largest of these. Pod-level resources, when
// set, win for the resources they name.
func podTotal(pod *corev1.Pod, side func(corev1.ResourceRequirements) corev1.ResourceList) corev1.ResourceList {
	total := corev1.ResourceList{}
	for i := range pod.Spec.Containers {
		addResources(total, side(pod.Spec.Containers[i].Resources))
	}
	sidecars, initMax := corev1.ResourceList{}, corev1.ResourceList{}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		need := corev1.ResourceList{}
		if podutil.IsSidecarIn(&pod.Spec, c) {
			addResources(total, side(c.Resources))
			addResources(sidecars, side(c.Resources))
			addResources(need, sidecars)
		} else {
			addResources(need, side(c.Resources))
			addResources(need, sidecars)
		}
		maxResources(initMax, need)
	}
	maxResources(total, initMax)
	if pod.Spec.Resources != nil {
		for name, q := range side(*pod.Spec.Resources) {
			if name == corev1.ResourceCPU || name == corev1.ResourceMemory {
				total[name] = q.DeepCopy()
			}
		}
	}
	return total
}

// addResources adds the cpu and memory of add to dst.
func addResources(dst, add corev1.ResourceList) {
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		q, ok := add[name]
		if !ok {
			continue
		}
		sum := dst[name]
		sum.Add(q)
		dst[name] = sum
	}
}

// maxResources raises the cpu and memory of dst to those of other.
func maxResources(dst, other corev1.ResourceList) {
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		q, ok := other[name]
		if !ok {
			continue
		}
		if cur, found := dst[name]; !found || q.Cmp(cur) > 0 {
			dst[name] = q.DeepCopy()
		}
	}
}
