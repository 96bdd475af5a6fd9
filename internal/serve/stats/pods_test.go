package stats

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

func u64(v uint64) *runtimeapi.UInt64Value { return &runtimeapi.UInt64Value{Value: v} }

func sandbox(id, uid, name string, ready bool, created int64) *runtimeapi.PodSandbox {
	state := runtimeapi.PodSandboxState_SANDBOX_NOTREADY
	if ready {
		state = runtimeapi.PodSandboxState_SANDBOX_READY
	}
	return &runtimeapi.PodSandbox{Id: id, State: state, CreatedAt: created,
		Metadata: &runtimeapi.PodSandboxMetadata{Name: name, Namespace: "ns", Uid: uid}}
}

func ctr(id, sandboxID, name string, running bool) *runtimeapi.Container {
	state := runtimeapi.ContainerState_CONTAINER_EXITED
	if running {
		state = runtimeapi.ContainerState_CONTAINER_RUNNING
	}
	return &runtimeapi.Container{Id: id, PodSandboxId: sandboxID, State: state, CreatedAt: epoch.UnixNano(),
		Metadata: &runtimeapi.ContainerMetadata{Name: name}}
}

func ctrStats(id string, cpu uint64, nanoCores *runtimeapi.UInt64Value, ws uint64) *runtimeapi.ContainerStats {
	ts := epoch.UnixNano()
	return &runtimeapi.ContainerStats{
		Attributes:    &runtimeapi.ContainerAttributes{Id: id},
		Cpu:           &runtimeapi.CpuUsage{Timestamp: ts, UsageCoreNanoSeconds: u64(cpu), UsageNanoCores: nanoCores},
		Memory:        &runtimeapi.MemoryUsage{Timestamp: ts, WorkingSetBytes: u64(ws), UsageBytes: u64(ws + 10)},
		WritableLayer: &runtimeapi.FilesystemUsage{Timestamp: ts, UsedBytes: u64(100), InodesUsed: u64(3)},
	}
}

func withSwap(s *runtimeapi.ContainerStats) *runtimeapi.ContainerStats {
	s.Swap = &runtimeapi.SwapUsage{Timestamp: epoch.UnixNano(), SwapUsageBytes: u64(30), SwapAvailableBytes: u64(70)}
	return s
}

func p64(v uint64) *uint64 { return &v }

func TestBuildPods(t *testing.T) {
	now := metav1.NewTime(epoch)
	in := podInputs{
		CRI: criSnapshot{
			Sandboxes: []*runtimeapi.PodSandbox{
				sandbox("old", "u1", "web", false, 1),
				sandbox("sb1", "u1", "web", true, 2),
				sandbox("gone", "u2", "done", false, 3),
			},
			Containers: []*runtimeapi.Container{
				ctr("c1", "sb1", "app", true),
				ctr("c0", "sb1", "app", false), // exited: left out
				ctr("c2", "sb1", "side", true),
				ctr("cx", "old", "app", true), // in a sandbox not picked
			},
			ContainerStats: []*runtimeapi.ContainerStats{
				withSwap(ctrStats("c1", 5e9, u64(7), 1000)),
				ctrStats("c2", 1e9, nil, 500),
			},
		},
		Volumes: func(uid string) []volumeStat {
			if uid != "u1" {
				return nil
			}
			return []volumeStat{
				{Stats: statsapi.VolumeStats{Name: "cache", FsStats: statsapi.FsStats{UsedBytes: p64(1 << 20), InodesUsed: p64(5)}}, Ephemeral: true},
				{Stats: statsapi.VolumeStats{Name: "token", FsStats: statsapi.FsStats{UsedBytes: p64(4096), InodesUsed: p64(4)}}},
			}
		},
		NanoCores: map[string]uint64{"c2": 3},
		Logs:      map[string]usage{"c1": {Bytes: 4096, Inodes: 2}},
		Now:       epoch,
	}
	got := buildPods(in)
	app := statsapi.ContainerStats{
		Name: "app", StartTime: now,
		CPU:    &statsapi.CPUStats{Time: now, UsageCoreNanoSeconds: p64(5e9), UsageNanoCores: p64(7)},
		Memory: &statsapi.MemoryStats{Time: now, WorkingSetBytes: p64(1000), UsageBytes: p64(1010)},
		Rootfs: &statsapi.FsStats{Time: now, UsedBytes: p64(100), InodesUsed: p64(3)},
		Logs:   &statsapi.FsStats{Time: now, UsedBytes: p64(4096), InodesUsed: p64(2)},
		Swap:   &statsapi.SwapStats{Time: now, SwapUsageBytes: p64(30), SwapAvailableBytes: p64(70)},
	}
	side := statsapi.ContainerStats{
		Name: "side", StartTime: now,
		CPU:    &statsapi.CPUStats{Time: now, UsageCoreNanoSeconds: p64(1e9), UsageNanoCores: p64(3)},
		Memory: &statsapi.MemoryStats{Time: now, WorkingSetBytes: p64(500), UsageBytes: p64(510)},
		Rootfs: &statsapi.FsStats{Time: now, UsedBytes: p64(100), InodesUsed: p64(3)},
		Swap:   &statsapi.SwapStats{Time: now, SwapUsageBytes: p64(0), SwapAvailableBytes: p64(0)},
	}
	want := []statsapi.PodStats{
		{
			PodRef: statsapi.PodReference{Name: "done", Namespace: "ns", UID: "u2"}, StartTime: metav1.NewTime(time.Unix(0, 3)),
			Containers: []statsapi.ContainerStats{},
			CPU:        &statsapi.CPUStats{Time: now}, Memory: &statsapi.MemoryStats{Time: now},
			EphemeralStorage: &statsapi.FsStats{Time: now, UsedBytes: p64(0), InodesUsed: p64(0)},
		},
		{
			PodRef: statsapi.PodReference{Name: "web", Namespace: "ns", UID: "u1"}, StartTime: metav1.NewTime(time.Unix(0, 2)),
			Containers: []statsapi.ContainerStats{app, side},
			CPU:        &statsapi.CPUStats{Time: now, UsageCoreNanoSeconds: p64(6e9), UsageNanoCores: p64(10)},
			Memory:     &statsapi.MemoryStats{Time: now, WorkingSetBytes: p64(1500), UsageBytes: p64(1520)},
			Swap:       &statsapi.SwapStats{Time: now, SwapUsageBytes: p64(30), SwapAvailableBytes: p64(70)},
			VolumeStats: []statsapi.VolumeStats{
				{Name: "cache", FsStats: statsapi.FsStats{UsedBytes: p64(1 << 20), InodesUsed: p64(5)}},
				{Name: "token", FsStats: statsapi.FsStats{UsedBytes: p64(4096), InodesUsed: p64(4)}},
			},
			// Writable layers, logs and the emptyDir on disk; not the token.
			EphemeralStorage: &statsapi.FsStats{Time: now, UsedBytes: p64(4296 + 1<<20), InodesUsed: p64(8 + 5)},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("buildPods (-want +got):\n%s", diff)
	}
}

func TestBuildPodsUsesSandboxStats(t *testing.T) {
	ts := epoch.UnixNano()
	in := podInputs{
		CRI: criSnapshot{
			Sandboxes:      []*runtimeapi.PodSandbox{sandbox("sb1", "u1", "web", true, 2)},
			Containers:     []*runtimeapi.Container{ctr("c1", "sb1", "app", true)},
			ContainerStats: []*runtimeapi.ContainerStats{ctrStats("c1", 5e9, nil, 1000)},
			SandboxStats: []*runtimeapi.PodSandboxStats{{
				Attributes: &runtimeapi.PodSandboxAttributes{Id: "sb1"},
				Linux: &runtimeapi.LinuxPodSandboxStats{
					Cpu:    &runtimeapi.CpuUsage{Timestamp: ts, UsageCoreNanoSeconds: u64(9e9)},
					Memory: &runtimeapi.MemoryUsage{Timestamp: ts, WorkingSetBytes: u64(4242)},
					Network: &runtimeapi.NetworkUsage{Timestamp: ts, DefaultInterface: &runtimeapi.NetworkInterfaceUsage{
						Name: "eth0", RxBytes: u64(1), RxErrors: u64(0), TxBytes: u64(2), TxErrors: u64(0)}},
				},
			}},
		},
		Now: epoch,
	}
	got := buildPods(in)[0]
	if *got.CPU.UsageCoreNanoSeconds != 9e9 || *got.Memory.WorkingSetBytes != 4242 {
		t.Errorf("pod cpu/memory = %v / %v, want the sandbox's", *got.CPU.UsageCoreNanoSeconds, *got.Memory.WorkingSetBytes)
	}
	if got.Network == nil || got.Network.Name != "eth0" || *got.Network.TxBytes != 2 {
		t.Errorf("pod network = %+v", got.Network)
	}
}
