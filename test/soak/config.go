package soak

import (
	"context"
	"time"

	"github.com/berthk8s/berth/test/bench"
)

// The scenarios, in the order Run runs them.
const (
	ScenarioChurn = "churn"
	ScenarioCrash = "crash"
	// ScenarioCrashVolumes is crash on pods with a volume of each kind the
	// kubelet sets up itself.
	ScenarioCrashVolumes = "crash-volumes"
	// ScenarioCrashResize kills the kubelet during in-place resizes.
	ScenarioCrashResize = "crash-resize"
	ScenarioRuntime     = "runtime-restart"
	ScenarioCRI         = "cri-faults"
	ScenarioAPI         = "api-outage"
	// ScenarioAPIStorm throttles (429) and fails (500) every API request.
	ScenarioAPIStorm = "api-storm"
	// ScenarioDiskFull fills the kubelet's root filesystem.
	ScenarioDiskFull = "disk-full"
	// ScenarioCheckpoints tears the kubelet's checkpoint files.
	ScenarioCheckpoints = "checkpoints"
)

// Scenarios is every scenario, in order.
var Scenarios = []string{ScenarioChurn, ScenarioCrash, ScenarioCrashVolumes, ScenarioCrashResize, ScenarioRuntime, ScenarioCRI, ScenarioAPI, ScenarioAPIStorm, ScenarioDiskFull, ScenarioCheckpoints}

// Config is one soak run.
type Config struct {
	Kubelets    []bench.Kubelet // run in this order, each scenario on a fresh Node
	CRIEndpoint string          // the runtime's (criproxy forwards to it)
	NodeIP      string
	WorkDir     string // cluster, kubelet root dirs, logs, the proxy's socket
	BinDir      string // control plane binaries ("" = default)
	// Only, when not empty, names the scenarios to run.
	Only []string

	Churn Churn
	Crash Crash
	// RuntimePods run while the runtime restarts; RestartRuntime restarts
	// it (the soak cannot know how the machine runs containerd).
	RuntimePods    int
	RestartRuntime func(ctx context.Context) error
	// FaultPods run while each CRI fault and each API storm lasts
	// FaultFor.
	FaultPods int
	FaultFor  time.Duration
	// OutagePods run while the API server is stopped for Outage.
	OutagePods int
	Outage     time.Duration
	// Settle bounds the wait for a kubelet to clean up after its pods
	// went (upstream removes a deleted pod's containers and sandbox in
	// its container GC, once a minute).
	Settle time.Duration
	// CgroupRoot and CNIDir are where pod cgroups and host-local's IP
	// reservations are looked for; defaults /sys/fs/cgroup and
	// /var/lib/cni/networks/berth.
	CgroupRoot, CNIDir string
	Seed               int64 // the crash points
	Logf               func(format string, args ...any)
}

// Churn is the churn scenario's size: Warmup cycles not measured, then
// Cycles of Pods pods each created, Running, deleted and gone. Resident
// memory may grow at most MaxRSSGrowth (a fraction) over the measured
// cycles, a promise held only from PromiseRSSCycles cycles on (a short run
// measures the heap's noise, not a leak).
type Churn struct {
	Warmup, Cycles, Pods int
	MaxRSSGrowth         float64
	PromiseRSSCycles     int
}

// Crash is the crash scenarios' size: Rounds of Pods pods, the kubelet
// killed once during their creation and once during their deletion
// (crash, crash-volumes); Pods pods resized Rounds times, the kubelet
// killed during each (crash-resize).
type Crash struct{ Rounds, Pods int }

func (c *Config) defaults() {
	if c.Settle == 0 {
		c.Settle = 150 * time.Second
	}
	if c.CgroupRoot == "" {
		c.CgroupRoot = "/sys/fs/cgroup"
	}
	if c.CNIDir == "" {
		c.CNIDir = "/var/lib/cni/networks/berth"
	}
	if c.Churn.MaxRSSGrowth == 0 {
		c.Churn.MaxRSSGrowth = 0.05
	}
	if c.Churn.PromiseRSSCycles == 0 {
		c.Churn.PromiseRSSCycles = 1000
	}
	if c.Logf == nil {
		c.Logf = func(string, ...any) {}
	}
}

func (c *Config) runs(scenario string) bool {
	if len(c.Only) == 0 {
		return true
	}
	for _, s := range c.Only {
		if s == scenario {
			return true
		}
	}
	return false
}
