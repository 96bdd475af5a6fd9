package stats

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// BenchmarkSummary measures one full summary (what /stats/summary and
// /metrics/cadvisor cost) for a node of n pods with two containers each,
// a log directory and an emptyDir volume per pod, and reports the cost
// per pod: it should stay about flat as n grows (one CRI pass, cached
// volume stats, cached sandbox processes).
func BenchmarkSummary(b *testing.B) {
	for _, n := range []int{10, 100, 500} {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			rt := &fakeCRI{}
			files := map[string]string{"proc/meminfo": "MemTotal: 1024 kB\nMemFree: 512 kB\n", "proc/stat": "btime 1\n",
				"proc/sys/kernel/pid_max": "100\n", "proc/sys/kernel/threads-max": "100\n", "proc/net/dev": "",
				"cgroup/cpuacct/cpuacct.usage": "1\n", "cgroup/memory/memory.usage_in_bytes": "1\n", "cgroup/memory/memory.stat": ""}
			for i := range n {
				sb, uid := fmt.Sprintf("sb%d", i), fmt.Sprintf("u%d", i)
				rt.snap.Sandboxes = append(rt.snap.Sandboxes, sandbox(sb, uid, fmt.Sprintf("p%d", i), true, int64(i)))
				for j, name := range []string{"app", "side"} {
					id := fmt.Sprintf("c%d-%d", i, j)
					c := ctr(id, sb, name, true)
					c.Labels = map[string]string{"io.kubernetes.pod.namespace": "ns", "io.kubernetes.pod.name": fmt.Sprintf("p%d", i), "io.kubernetes.pod.uid": uid}
					rt.snap.Containers = append(rt.snap.Containers, c)
					rt.snap.ContainerStats = append(rt.snap.ContainerStats, ctrStats(id, 1e9, nil, 1000))
					files[fmt.Sprintf("logs/ns_p%d_%s/%s/0.log", i, uid, name)] = "line\n"
				}
				files[fmt.Sprintf("pods/%s/volumes/kubernetes.io~empty-dir/data/f", uid)] = "x"
			}
			writeTree(b, dir, files)
			p, err := New(Config{Runtime: rt, Images: rt, NodeName: "n", RootDir: dir, PodLogsDir: filepath.Join(dir, "logs"),
				ProcRoot: filepath.Join(dir, "proc"), CgroupRoot: filepath.Join(dir, "cgroup"), Clock: clocktesting.NewFakeClock(epoch)})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			p.volumes.step(ctx)
			b.ResetTimer()
			start := time.Now()
			for b.Loop() {
				sum, err := p.Summary(ctx, false)
				if err != nil || len(sum.Pods) != n || len(sum.Pods[0].VolumeStats) != 1 {
					b.Fatalf("summary: %v", err)
				}
			}
			b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N)/float64(n), "ns/pod")
		})
	}
}
