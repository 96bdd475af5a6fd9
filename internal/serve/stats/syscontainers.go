package stats

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// podsCgroups are the kubepods cgroup's names under the cgroupfs and
// systemd drivers, tried in this order.
var podsCgroups = []string{"kubepods", "kubepods.slice"}

// systemContainers returns the node's system containers, as upstream
// names them: "kubelet" (berth's own cgroup), "pods" (the kubepods
// cgroup, when it exists) and those named in Config.SystemCgroups
// ("runtime", "misc"). One that cannot be read is left out.
func (p *Provider) systemContainers(ctx context.Context, now time.Time) []statsapi.ContainerStats {
	var out []statsapi.ContainerStats
	for _, sc := range p.systemCgroups() {
		cs, err := p.node.cgroupStats(sc.path, now)
		if err != nil {
			klog.FromContext(ctx).V(4).Info("Cannot read system container", "name", sc.name, "cgroup", sc.path.memory, "err", err)
			continue
		}
		cs.Name = sc.name
		if rate, ok := p.sampler.Rates()[systemKey(sc.name)]; ok && cs.CPU != nil {
			cs.CPU.UsageNanoCores = ptr(rate)
		}
		out = append(out, *cs)
	}
	return out
}

type systemCgroup struct {
	name string
	path cgroupPaths
}

// cgroupPaths are a cgroup's paths in the cpu (cpuacct) and memory
// hierarchies: one path on v2, and on v1 for a cgroup berth names; a
// process's own may differ per controller on v1.
type cgroupPaths struct{ cpu, memory string }

// systemCgroups lists the system containers and their cgroup paths, in
// name order.
func (p *Provider) systemCgroups() []systemCgroup {
	paths := map[string]cgroupPaths{}
	for name, path := range p.cfg.SystemCgroups {
		paths[name] = cgroupPaths{path, path}
	}
	if _, ok := paths[statsapi.SystemContainerKubelet]; !ok {
		if own, err := p.node.ownCgroup(); err == nil {
			paths[statsapi.SystemContainerKubelet] = own
		}
	}
	if _, ok := paths[statsapi.SystemContainerPods]; !ok {
		for _, name := range podsCgroups {
			if p.node.cgroupExists("/" + name) {
				paths[statsapi.SystemContainerPods] = cgroupPaths{"/" + name, "/" + name}
				break
			}
		}
	}
	var out []systemCgroup
	for _, name := range []string{statsapi.SystemContainerKubelet, statsapi.SystemContainerMisc, statsapi.SystemContainerPods, statsapi.SystemContainerRuntime} {
		if path, ok := paths[name]; ok {
			out = append(out, systemCgroup{name, path})
		}
	}
	return out
}

// systemKey is the CPU sample key of a system container.
func systemKey(name string) string { return "system:" + name }

// ownCgroup is berth's own cgroup from <proc>/self/cgroup: the unified
// one on v2, the cpuacct and memory controllers' on v1.
func (r nodeReader) ownCgroup() (cgroupPaths, error) {
	data, err := r.read(r.proc, "self", "cgroup")
	if err != nil {
		return cgroupPaths{}, err
	}
	unified := r.unified()
	cpu, okCPU := parseProcCgroup(data, unified, "cpuacct")
	mem, okMem := parseProcCgroup(data, unified, "memory")
	if !okCPU || !okMem {
		return cgroupPaths{}, fmt.Errorf("read own cgroup: none in %q", filepath.Join(r.proc, "self", "cgroup"))
	}
	return cgroupPaths{cpu, mem}, nil
}

// parseProcCgroup returns a cgroup path of /proc/<pid>/cgroup: the "0::"
// line on v2, the v1 controller's line otherwise. It is pure.
func parseProcCgroup(data string, unified bool, controller string) (string, bool) {
	sc := bufio.NewScanner(strings.NewReader(data))
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if unified && parts[0] == "0" && parts[1] == "" {
			return parts[2], true
		}
		if !unified && slices.Contains(strings.Split(parts[1], ","), controller) {
			return parts[2], true
		}
	}
	return "", false
}

// cgroupDir is the directory of a cgroup for a v1 controller (ignored on
// v2).
func (r nodeReader) cgroupDir(controller, path string) string {
	if r.unified() {
		return filepath.Join(r.cgroup, path)
	}
	return filepath.Join(r.cgroup, controller, path)
}

func (r nodeReader) cgroupExists(path string) bool {
	_, err := os.Stat(r.cgroupDir("memory", path))
	return err == nil
}

// cgroupCPU is a cgroup's cumulative CPU time in nanoseconds.
func (r nodeReader) cgroupCPU(path string) (uint64, error) {
	if r.unified() {
		data, err := r.read(r.cgroupDir("", path), "cpu.stat")
		if err != nil {
			return 0, err
		}
		ns, ok := cpuV2(parseKeyValues(data))
		if !ok {
			return 0, fmt.Errorf("read cgroup %q cpu: no usage_usec", path)
		}
		return ns, nil
	}
	data, err := r.read(r.cgroupDir("cpuacct", path), "cpuacct.usage")
	if err != nil {
		return 0, err
	}
	return parseUint(data)
}

// cgroupStats reads a cgroup's CPU and memory as a system container.
func (r nodeReader) cgroupStats(path cgroupPaths, now time.Time) (*statsapi.ContainerStats, error) {
	cpu, err := r.cgroupCPU(path.cpu)
	if err != nil {
		return nil, err
	}
	usageFile, prefix := "memory.usage_in_bytes", "total_"
	if r.unified() {
		usageFile, prefix = "memory.current", ""
	}
	dir := r.cgroupDir("memory", path.memory)
	usageData, err := r.read(dir, usageFile)
	if err != nil {
		return nil, err
	}
	usage, err := parseUint(usageData)
	if err != nil {
		return nil, err
	}
	statData, err := r.read(dir, "memory.stat")
	if err != nil {
		return nil, err
	}
	stat := parseKeyValues(statData)
	rss := stat[prefix+"rss"]
	if r.unified() {
		rss = stat["anon"]
	}
	t := metav1.NewTime(now)
	ws := workingSet(usage, stat[prefix+"inactive_file"])
	mem := &statsapi.MemoryStats{Time: t, UsageBytes: ptr(usage), WorkingSetBytes: ptr(ws),
		RSSBytes: ptr(rss), PageFaults: ptr(stat[prefix+"pgfault"]), MajorPageFaults: ptr(stat[prefix+"pgmajfault"])}
	// As upstream (cAdvisor's spec limit): a limited cgroup's available
	// memory is its limit less its working set, which is what
	// allocatableMemory.available reads of "pods".
	limitFile := "memory.limit_in_bytes"
	if r.unified() {
		limitFile = "memory.max"
	}
	if data, err := r.read(dir, limitFile); err == nil {
		if limit, ok := parseMemoryLimit(data); ok {
			mem.AvailableBytes = ptr(available(limit, ws))
		}
	}
	return &statsapi.ContainerStats{CPU: &statsapi.CPUStats{Time: t, UsageCoreNanoSeconds: ptr(cpu)}, Memory: mem}, nil
}
