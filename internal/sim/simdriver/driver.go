package simdriver

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/platform/cri/crifake"
	"github.com/berthk8s/berth/internal/pod/prober"
	"github.com/berthk8s/berth/internal/sim/appmodel"
)

// DefaultPeriod is how often Run looks at the running containers.
const DefaultPeriod = time.Second

// Config is a Driver's.
type Config struct {
	// Runtime is the node's fake runtime. Required.
	Runtime *crifake.Fake
	// Clock is the node's clock (the fake's too). Required.
	Clock clock.WithTicker
	// Period is Run's; DefaultPeriod when 0.
	Period time.Duration
	// NodeName and MemoryCapacity are the node's, for Summary.
	NodeName       string
	MemoryCapacity uint64
}

// Driver performs the model on one node's runtime. Run is its one
// goroutine; Probe is safe for concurrent use. It keeps no state of its
// own: the model is re-read from the pod's annotations every time, the
// containers' ages from the runtime.
type Driver struct {
	cfg Config
}

var _ prober.Handler = (*Driver)(nil).Probe

// New validates cfg; it starts nothing.
func New(cfg Config) (*Driver, error) {
	if cfg.Runtime == nil || cfg.Clock == nil {
		return nil, errors.New("simdriver: Runtime and Clock are required")
	}
	if cfg.Period <= 0 {
		cfg.Period = DefaultPeriod
	}
	return &Driver{cfg: cfg}, nil
}

// Probe answers a probe of the container instance id from the model
// (prober.Handler). An instance that no longer runs has no verdict.
func (d *Driver) Probe(_ context.Context, t prober.ProbeType, pod *corev1.Pod, c *corev1.Container, id string) (bool, string, error) {
	started, ok := d.cfg.Runtime.StartedAt(id)
	if !ok {
		return false, "", fmt.Errorf("container %q does not run", id)
	}
	b, _ := appmodel.Parse(pod.Annotations, c.Name) // Run logs what does not parse
	ok, out := b.Answer(probeKind(t), d.cfg.Clock.Since(started))
	return ok, out, nil
}

func probeKind(t prober.ProbeType) appmodel.Probe {
	switch t {
	case prober.Liveness:
		return appmodel.Liveness
	case prober.Startup:
		return appmodel.Startup
	}
	return appmodel.Readiness
}

// Run applies the model every Period until ctx ends.
func (d *Driver) Run(ctx context.Context) error {
	t := d.cfg.Clock.NewTicker(d.cfg.Period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
			d.Step(ctx)
		}
	}
}

// Step applies the model once: each running container the model says
// has exited by its age exits with the model's code; the others use the
// model's memory.
func (d *Driver) Step(ctx context.Context) {
	logger := klog.FromContext(ctx)
	now := d.cfg.Clock.Now()
	for _, r := range d.cfg.Runtime.RunningContainers() {
		b, err := appmodel.Parse(r.PodAnnotations, r.Name)
		if err != nil {
			logger.V(2).Info("Ignoring application model annotations", "container", r.Name, "err", err)
		}
		age := now.Sub(r.StartedAt)
		if exited, code := b.Exit(age); exited {
			// A container stopped meanwhile is not an error.
			if err := d.cfg.Runtime.ExitContainer(r.ID, code, ""); err != nil {
				logger.V(4).Info("Container did not exit", "container", r.Name, "err", err)
			}
			continue
		}
		if err := d.cfg.Runtime.SetMemoryUsage(r.ID, b.MemoryAt(age)); err != nil {
			logger.V(4).Info("Container memory not set", "container", r.Name, "err", err)
		}
	}
}

// Summary is the node's stats summary as the model makes it, for the
// node's eviction manager (eviction.SummaryFunc): the node's memory (its
// capacity less what the running containers use, as the root cgroup's
// working set) and each pod's and container's memory working set, at the
// runtime's figures (Step sets them). No filesystem, CPU or process
// figures: the signals they feed stay unobserved.
func (d *Driver) Summary(_ context.Context, _ bool) (*statsapi.Summary, error) {
	now := metav1.NewTime(d.cfg.Clock.Now())
	var used uint64
	var pods []statsapi.PodStats
	index := map[string]int{}
	for _, r := range d.cfg.Runtime.RunningContainers() {
		used += r.MemoryUsage
		i, ok := index[r.Pod.UID]
		if !ok {
			i = len(pods)
			index[r.Pod.UID] = i
			pods = append(pods, statsapi.PodStats{
				PodRef: statsapi.PodReference{Name: r.Pod.Name, Namespace: r.Pod.Namespace, UID: r.Pod.UID},
				Memory: memoryStats(now, 0),
			})
		}
		p := &pods[i]
		*p.Memory.WorkingSetBytes += r.MemoryUsage
		*p.Memory.UsageBytes += r.MemoryUsage
		p.Containers = append(p.Containers, statsapi.ContainerStats{
			Name: r.Name, StartTime: metav1.NewTime(r.StartedAt), Memory: memoryStats(now, r.MemoryUsage),
		})
	}
	node := memoryStats(now, used)
	avail := uint64(0)
	if used < d.cfg.MemoryCapacity {
		avail = d.cfg.MemoryCapacity - used
	}
	node.AvailableBytes = &avail
	return &statsapi.Summary{Node: statsapi.NodeStats{NodeName: d.cfg.NodeName, Memory: node}, Pods: pods}, nil
}

func memoryStats(at metav1.Time, bytes uint64) *statsapi.MemoryStats {
	ws, usage := bytes, bytes
	return &statsapi.MemoryStats{Time: at, WorkingSetBytes: &ws, UsageBytes: &usage}
}
