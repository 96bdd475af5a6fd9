package simulate

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/app/agent"
	"github.com/berthk8s/berth/internal/config"
	"github.com/berthk8s/berth/internal/platform/cri"
	"github.com/berthk8s/berth/internal/platform/cri/crifake"
	"github.com/berthk8s/berth/internal/platform/machine"
	"github.com/berthk8s/berth/internal/sim/simdriver"
	"github.com/berthk8s/berth/internal/volumes/volume"
)

// The simulated node's mounter is the volume manager's.
var _ volume.Mounter = (*simdriver.Mounter)(nil)

// runtimeTimeout is the simulated runtime's request timeout, upstream's
// default.
const runtimeTimeout = 2 * time.Minute

// nodeConfig is node name's configuration: the kubelet's defaults, with
// what touches the host turned off (agent.RunSimulated's checks) and the
// Sim's capacity, labels and taints.
func (s *Sim) nodeConfig(name string) *config.Config {
	dir := filepath.Join(s.cfg.RootDir, name)
	cfg := &config.Config{
		NodeName: name, RootDir: filepath.Join(dir, "root"), Kubeconfig: s.cfg.Kubeconfig,
		BerthFlags:             config.BerthFlags{DevicePluginDir: filepath.Join(dir, "device-plugins")},
		PodInfraContainerImage: "registry.k8s.io/pause:3.10.1",
		NodeLabels:             s.cfg.Node.Labels, RegisterWithTaints: s.cfg.Node.Taints,
	}
	config.SetDefaults(&cfg.Kubelet)
	kc := &cfg.Kubelet
	kc.ContainerRuntimeEndpoint = "simulated"
	kc.PodLogsDir = filepath.Join(dir, "logs")
	kc.ReadOnlyPort = 0
	kc.HealthzPort = ptr.To[int32](0)
	kc.EnableServer = ptr.To(false)
	kc.ResolverConfig = ptr.To("")
	kc.FailCgroupV1 = ptr.To(false)
	kc.CgroupsPerQOS = ptr.To(false)
	kc.EnforceNodeAllocatable = []string{"none"}
	kc.MakeIPTablesUtilChains = ptr.To(false)
	kc.MaxPods = s.cfg.Node.Capacity.Pods
	if s.cfg.Node.SyncFrequency > 0 {
		kc.SyncFrequency = metav1.Duration{Duration: s.cfg.Node.SyncFrequency}
	}
	return cfg
}

// machineInfo is what node i reports as its machine: the Sim's capacity
// and made-up identities.
func (s *Sim) machineInfo(i int) machine.Info {
	c := s.cfg.Node.Capacity
	return machine.Info{
		NumCPU: c.CPU, MemoryBytes: c.Memory, RootFSBytes: c.EphemeralStorage, MaxPID: 4194304,
		MachineID: fmt.Sprintf("sim%029d", i), SystemUUID: fmt.Sprintf("sim-%d", i), BootID: fmt.Sprintf("sim-boot-%d", i),
		KernelVersion: "berth-simulate", OSImage: "berth simulate", OperatingSystem: "linux", Architecture: "amd64",
		CgroupV2: true,
	}
}

// startNode builds node i's runtime and model and runs the node until ctx
// ends; done is closed once both returned.
func (s *Sim) startNode(ctx context.Context, i int, name string, done chan<- error) error {
	fake := crifake.New(s.cfg.Clock)
	fake.DisableCallLog()
	fake.AllowAllPulls()
	// Node i's pods get 10.<128+i/256>.<i%256>.2 and up: a /24 each.
	fake.SetPodSubnet(fmt.Sprintf("10.%d.%d", 128+(i/256)%128, i%256))
	lat := s.cfg.Latency
	fake.SetLatency("RunPodSandbox", lat.Sandbox)
	fake.SetLatency("StartContainer", lat.Container)
	fake.SetLatency("PullImage", lat.Pull)
	for _, r := range s.cfg.Rules {
		r.apply(i, fake)
	}
	client, closeRuntime, err := fake.Dial(cri.Options{Timeout: runtimeTimeout})
	if err != nil {
		return err
	}
	mi := s.machineInfo(i)
	driver, err := simdriver.New(simdriver.Config{Runtime: fake, Clock: s.cfg.Clock, NodeName: name, MemoryCapacity: uint64(max(mi.MemoryBytes, 0))})
	if err != nil {
		closeRuntime()
		return err
	}
	sim := agent.Simulated{
		Runtime: client, Machine: mi, API: s.cfg.API, Probes: driver.Probe, Mounter: &simdriver.Mounter{},
		IPs: []string{nodeIP(i)}, Summary: driver.Summary, Pods: s.feed,
	}
	cfg := s.nodeConfig(name)
	go func() {
		ctx, cancel := context.WithCancel(ctx)
		modelDone := make(chan struct{})
		go func() { defer close(modelDone); _ = driver.Run(ctx) }()
		err := agent.RunSimulated(ctx, cfg, s.cfg.Version, s.cfg.Clock, sim)
		cancel()
		<-modelDone
		closeRuntime()
		done <- err
		close(done)
	}()
	return nil
}

// nodeIP is node i's address: 10.64.0.1 and up, one each.
func nodeIP(i int) string {
	j := i + 1
	return fmt.Sprintf("10.%d.%d.%d", 64+(j>>16)%64, (j>>8)&255, j&255)
}
