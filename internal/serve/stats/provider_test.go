package stats

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

// fakeCRI answers the provider's CRI calls from fixed data.
type fakeCRI struct {
	snap criSnapshot
	cpu  uint64 // c1's cumulative CPU, changed between samples
	// statusCalls counts PodSandboxStatus calls.
	statusCalls int
	// onStats, if set, runs at each ListContainerStats: a slow runtime.
	onStats func()
}

// PodSandboxStatus answers containerd's verbose info: the sandbox's pid 4242.
func (f *fakeCRI) PodSandboxStatus(_ context.Context, in *runtimeapi.PodSandboxStatusRequest, _ ...grpc.CallOption) (*runtimeapi.PodSandboxStatusResponse, error) {
	f.statusCalls++
	return &runtimeapi.PodSandboxStatusResponse{Status: &runtimeapi.PodSandboxStatus{Id: in.GetPodSandboxId()},
		Info: map[string]string{"info": `{"pid": 4242, "image": "pause"}`}}, nil
}

func (f *fakeCRI) ListPodSandbox(context.Context, *runtimeapi.ListPodSandboxRequest, ...grpc.CallOption) (*runtimeapi.ListPodSandboxResponse, error) {
	return &runtimeapi.ListPodSandboxResponse{Items: f.snap.Sandboxes}, nil
}

func (f *fakeCRI) ListContainers(context.Context, *runtimeapi.ListContainersRequest, ...grpc.CallOption) (*runtimeapi.ListContainersResponse, error) {
	return &runtimeapi.ListContainersResponse{Containers: f.snap.Containers}, nil
}

func (f *fakeCRI) ListContainerStats(context.Context, *runtimeapi.ListContainerStatsRequest, ...grpc.CallOption) (*runtimeapi.ListContainerStatsResponse, error) {
	if f.onStats != nil {
		f.onStats()
	}
	if f.snap.ContainerStats != nil {
		return &runtimeapi.ListContainerStatsResponse{Stats: f.snap.ContainerStats}, nil
	}
	return &runtimeapi.ListContainerStatsResponse{Stats: []*runtimeapi.ContainerStats{ctrStats("c1", f.cpu, nil, 1000)}}, nil
}

func (f *fakeCRI) ListPodSandboxStats(context.Context, *runtimeapi.ListPodSandboxStatsRequest, ...grpc.CallOption) (*runtimeapi.ListPodSandboxStatsResponse, error) {
	return nil, os.ErrNotExist
}

func (f *fakeCRI) ImageFsInfo(context.Context, *runtimeapi.ImageFsInfoRequest, ...grpc.CallOption) (*runtimeapi.ImageFsInfoResponse, error) {
	return &runtimeapi.ImageFsInfoResponse{ImageFilesystems: []*runtimeapi.FilesystemUsage{{
		Timestamp: epoch.UnixNano(), FsId: &runtimeapi.FilesystemIdentifier{Mountpoint: "/"}, UsedBytes: u64(77), InodesUsed: u64(5),
	}}}, nil
}

func writeTree(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestProviderSummary(t *testing.T) {
	const mi = "MemTotal:       10485760 kB\nMemFree:         4194304 kB\n"
	netDev, err := os.ReadFile("testdata/net_dev")
	if err != nil {
		t.Fatal(err)
	}
	proc := map[string]string{"meminfo": mi, "stat": "cpu 1 2\nbtime 1795370000\n",
		"sys/kernel/pid_max": "32768\n", "sys/kernel/threads-max": "192730\n",
		"net/dev": "Inter-|\n face |\n  ens3: 7 0 0 0 0 0 0 0 9 0 0 0 0 0 0 0\n", "4242/net/dev": string(netDev)}
	tests := []struct {
		name   string
		cgroup map[string]string
		// self is <proc>/self/cgroup.
		self string
		// node CPU (ns) at the two samples, and the working set expected.
		cpu1, cpu2 string
		wantWS     uint64
	}{
		{
			name: "cgroup v1",
			cgroup: map[string]string{"memory/memory.usage_in_bytes": "6000\n", "memory/memory.stat": "total_inactive_file 1000\ntotal_rss 300\n",
				"memory/kubepods/memory.usage_in_bytes": "4000\n", "memory/kubepods/memory.stat": "total_inactive_file 1000\ntotal_rss 200\n",
				"memory/kubepods/memory.limit_in_bytes": "10000\n", "memory/system.slice/berth.service/memory.limit_in_bytes": "9223372036854771712\n",
				"cpuacct/kubepods/cpuacct.usage":                          "5000\n",
				"memory/system.slice/berth.service/memory.usage_in_bytes": "900\n", "memory/system.slice/berth.service/memory.stat": "total_inactive_file 100\n",
				"cpuacct/system.slice/berth.service/cpuacct.usage": "7000\n"},
			self: "12:cpu,cpuacct:/system.slice/berth.service\n4:memory:/system.slice/berth.service\n0::/system.slice/berth.service\n",
			cpu1: "cpuacct/cpuacct.usage=1000000000", cpu2: "cpuacct/cpuacct.usage=21000000000",
			wantWS: 5000,
		},
		{
			name: "cgroup v2",
			cgroup: map[string]string{"cgroup.controllers": "cpu memory\n", "memory.stat": "anon 300\ninactive_file 1073741824\n",
				"kubepods.slice/memory.current": "4000\n", "kubepods.slice/memory.stat": "inactive_file 1000\nanon 200\n",
				"kubepods.slice/memory.max": "10000\n", "system.slice/berth.service/memory.max": "max\n",
				"kubepods.slice/cpu.stat":                   "usage_usec 5\n",
				"system.slice/berth.service/memory.current": "900\n", "system.slice/berth.service/memory.stat": "inactive_file 100\n",
				"system.slice/berth.service/cpu.stat": "usage_usec 7\n"},
			self: "0::/system.slice/berth.service\n",
			cpu1: "cpu.stat=usage_usec 1000000\n", cpu2: "cpu.stat=usage_usec 21000000\n",
			wantWS: 6<<30 - 1<<30,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, filepath.Join(dir, "proc"), proc)
			writeTree(t, filepath.Join(dir, "proc"), map[string]string{"self/cgroup": tt.self})
			writeTree(t, filepath.Join(dir, "cgroup"), tt.cgroup)
			setCPU := func(kv string) {
				name, val, _ := strings.Cut(kv, "=")
				writeTree(t, filepath.Join(dir, "cgroup"), map[string]string{name: val})
			}
			clk := clocktesting.NewFakeClock(epoch)
			rt := &fakeCRI{snap: criSnapshot{
				Sandboxes:  []*runtimeapi.PodSandbox{sandbox("sb1", "u1", "web", true, 2)},
				Containers: []*runtimeapi.Container{ctr("c1", "sb1", "app", true)},
			}, cpu: 1e9}
			p, err := New(Config{Runtime: rt, Images: rt, NodeName: "n", RootDir: dir, PodLogsDir: dir,
				ProcRoot: filepath.Join(dir, "proc"), CgroupRoot: filepath.Join(dir, "cgroup"), Clock: clk})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			setCPU(tt.cpu1)
			p.sampler.step(ctx)
			clk.Step(10 * time.Second)
			setCPU(tt.cpu2)
			rt.cpu = 6e9
			p.sampler.step(ctx)

			// The runtime takes a second to answer: the node's figures
			// are stamped when they are read, after it.
			rt.onStats = func() { clk.Step(time.Second) }
			sum, err := p.Summary(ctx, false)
			if err != nil {
				t.Fatal(err)
			}
			n := sum.Node
			if read := clk.Now(); n.CPU == nil || !n.CPU.Time.Time.Equal(read) || n.Memory == nil || !n.Memory.Time.Time.Equal(read) {
				t.Errorf("node cpu and memory stamped %v, %v; want %v, when they are read", n.CPU, n.Memory, read)
			}
			if n.CPU == nil || *n.CPU.UsageCoreNanoSeconds != 21e9 || n.CPU.UsageNanoCores == nil || *n.CPU.UsageNanoCores != 2e9 {
				t.Errorf("node cpu = %+v", n.CPU)
			}
			if n.Memory == nil || *n.Memory.WorkingSetBytes != tt.wantWS || *n.Memory.RSSBytes != 300 {
				t.Errorf("node memory = %+v, want working set %d", n.Memory, tt.wantWS)
			}
			if n.StartTime.Unix() != 1795370000 || n.Fs == nil || n.Rlimit == nil || *n.Rlimit.MaxPID != 32768 {
				t.Errorf("node start/fs/rlimit = %v %+v %+v", n.StartTime, n.Fs, n.Rlimit)
			}
			if n.Network == nil || len(n.Network.Interfaces) != 1 || n.Network.Interfaces[0].Name != "ens3" {
				t.Errorf("node network = %+v, want ens3 from <proc>/net/dev", n.Network)
			}
			if pn := sum.Pods[0].Network; pn == nil || pn.Name != "eth0" || *pn.RxBytes != 1000000 {
				t.Errorf("pod network = %+v, want eth0 from the sandbox's <proc>/4242/net/dev", pn)
			}
			if _, err := p.Summary(ctx, false); err != nil || rt.statusCalls != 1 {
				t.Errorf("sandbox status calls = %d after two summaries, want 1 (cached)", rt.statusCalls)
			}
			var sys []string
			for _, sc := range n.SystemContainers {
				avail := "unlimited"
				if a := sc.Memory.AvailableBytes; a != nil {
					avail = fmt.Sprint(*a)
				}
				sys = append(sys, fmt.Sprintf("%s cpu=%d ws=%d available=%s", sc.Name, *sc.CPU.UsageCoreNanoSeconds, *sc.Memory.WorkingSetBytes, avail))
			}
			if diff := cmp.Diff([]string{"kubelet cpu=7000 ws=800 available=unlimited", "pods cpu=5000 ws=3000 available=7000"}, sys); diff != "" {
				t.Errorf("system containers (-want +got):\n%s", diff)
			}
			if n.Runtime == nil || *n.Runtime.ImageFs.UsedBytes != 77 || n.Runtime.ImageFs.CapacityBytes == nil {
				t.Errorf("node runtime = %+v", n.Runtime)
			}
			if len(sum.Pods) != 1 || len(sum.Pods[0].Containers) != 1 || *sum.Pods[0].Containers[0].CPU.UsageNanoCores != 5e8 {
				t.Errorf("pods = %+v", sum.Pods)
			}
			only, err := p.Summary(ctx, true)
			if err != nil {
				t.Fatal(err)
			}
			if only.Node.Fs != nil || only.Node.Runtime != nil || only.Pods[0].EphemeralStorage != nil || only.Pods[0].Containers[0].Rootfs != nil {
				t.Errorf("only_cpu_and_memory kept more: %+v", only)
			}
			if only.Node.Memory == nil || only.Pods[0].Memory == nil {
				t.Errorf("only_cpu_and_memory lost memory: %+v", only)
			}
		})
	}
}

func TestNewValidates(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Error("New(Config{}) succeeded")
	}
}

func TestImageFsStats(t *testing.T) {
	dir := t.TempDir()
	rt := &fakeCRI{}
	p, err := New(Config{Runtime: rt, Images: rt, NodeName: "n", RootDir: dir, PodLogsDir: dir,
		ProcRoot: dir, CgroupRoot: dir, Clock: clocktesting.NewFakeClock(epoch)})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := p.ImageFsStats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// Usage from the runtime, capacity and availability from statfs("/").
	if *fs.UsedBytes != 77 || fs.CapacityBytes == nil || *fs.CapacityBytes == 0 || fs.AvailableBytes == nil || *fs.AvailableBytes > *fs.CapacityBytes {
		t.Errorf("ImageFsStats = used %v, capacity %v, available %v", *fs.UsedBytes, fs.CapacityBytes, fs.AvailableBytes)
	}
}
