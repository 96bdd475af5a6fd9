package eviction

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/klog/v2"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// Notifier arms a kernel notification on a cgroup's memory usage
// (kernelMemcgNotification): wake is called, from any goroutine, whenever
// the memory.usage_in_bytes of the cgroup directory dir crosses
// usageThreshold bytes, either way, until the returned Closer is closed.
// MemcgNotifier is the cgroup v1 implementation.
type Notifier interface {
	Arm(ctx context.Context, dir string, usageThreshold int64, wake func()) (io.Closer, error)
}

// MemoryCgroups are the memory cgroup directories the notifiers watch: the
// root memory cgroup for memory.available and the pods' (kubepods) for
// allocatableMemory.available, as upstream's NewMemoryThresholdNotifier.
type MemoryCgroups struct {
	Node, Pods string
}

// dir is the cgroup a memory threshold watches; "" when there is none.
func (c MemoryCgroups) dir(s Signal) string {
	if s == SignalAllocatableMemoryAvailable {
		return c.Pods
	}
	return c.Node
}

// notifierRefreshInterval is how often the notifications are re-armed
// from the latest summary (upstream's notifierRefreshInterval).
const notifierRefreshInterval = 10 * time.Second

// isMemorySignal reports the signals upstream arms a notifier for.
func isMemorySignal(s Signal) bool {
	return s == SignalMemoryAvailable || s == SignalAllocatableMemoryAvailable
}

// MemcgThreshold is the memory.usage_in_bytes at which threshold t is
// crossed, as upstream's linuxMemoryThresholdNotifier.UpdateThreshold
// computes it from the summary: the kernel counts inactive file pages in
// the usage but the signal does not, so the notification is set at
// capacity - threshold + inactive_file, capacity being available + working
// set and inactive_file usage - working set. memory.available reads the
// node's memory, allocatableMemory.available the "pods" system container's.
// It is pure.
func MemcgThreshold(t Threshold, s *statsapi.Summary) (int64, error) {
	m := memcgStats(t.Signal, s)
	if m == nil || m.UsageBytes == nil || m.WorkingSetBytes == nil || m.AvailableBytes == nil {
		return 0, fmt.Errorf("compute memcg threshold of %s: summary was incomplete, it has no usage, working set or available memory", t.Signal)
	}
	if *m.UsageBytes < *m.WorkingSetBytes {
		return 0, fmt.Errorf("compute memcg threshold of %s: usage %d is below the working set %d", t.Signal, *m.UsageBytes, *m.WorkingSetBytes)
	}
	inactiveFile := int64(*m.UsageBytes - *m.WorkingSetBytes)
	capacity := *resource.NewQuantity(int64(*m.AvailableBytes+*m.WorkingSetBytes), resource.BinarySI)
	q := t.Value.Of(capacity)
	return capacity.Value() - q.Value() + inactiveFile, nil
}

func memcgStats(sig Signal, s *statsapi.Summary) *statsapi.MemoryStats {
	if s == nil {
		return nil
	}
	if sig != SignalAllocatableMemoryAvailable {
		return s.Node.Memory
	}
	for _, c := range s.Node.SystemContainers {
		if c.Name == statsapi.SystemContainerPods {
			return c.Memory
		}
	}
	return nil
}

// notifierDescription is upstream's name of a threshold's notifier
// ("hard memory eviction threshold", "soft allocatable memory eviction
// threshold").
func notifierDescription(t Threshold) string {
	kind, allocatable := "soft ", ""
	if t.Hard() {
		kind = "hard "
	}
	if t.Signal == SignalAllocatableMemoryAvailable {
		allocatable = "allocatable "
	}
	return kind + allocatable + "memory eviction threshold"
}

// errNoCgroup is returned for a memory threshold whose cgroup is unknown.
var errNoCgroup = errors.New("no memory cgroup to watch")

// rearm arms the memory notifications from sum, as upstream's synchronize
// updates its threshold notifiers: at the first pass and then at most
// every notifierRefreshInterval, each replacing the previous one of its
// threshold. Only Run (through Pass) calls it.
func (m *Manager) rearm(ctx context.Context, sum *statsapi.Summary) {
	n := m.cfg.Notifier
	if n == nil || (!m.armedAt.IsZero() && m.cfg.Clock.Since(m.armedAt) <= notifierRefreshInterval) {
		return
	}
	m.armedAt = m.cfg.Clock.Now()
	logger := klog.FromContext(ctx)
	for _, t := range m.thresholds {
		if !isMemorySignal(t.Signal) {
			continue
		}
		desc := notifierDescription(t)
		usage, err := MemcgThreshold(t, sum)
		if err == nil && m.cfg.MemoryCgroups.dir(t.Signal) == "" {
			err = errNoCgroup
		}
		if err != nil {
			logger.Info("Eviction manager: failed to update notifier", "notifier", desc, "err", err)
			continue
		}
		if old := m.armed[t.key()]; old != nil {
			_ = old.Close()
			delete(m.armed, t.key())
		}
		logger.V(3).Info("Eviction manager: setting notifier to capacity", "notifier", desc, "capacity", usage)
		c, err := n.Arm(ctx, m.cfg.MemoryCgroups.dir(t.Signal), usage, func() {
			logger.Info(fmt.Sprintf("eviction manager: %s crossed", desc))
			select {
			case m.wake <- struct{}{}:
			default:
			}
		})
		if err != nil {
			logger.Info("Eviction manager: failed to update notifier", "notifier", desc, "err", err)
			continue
		}
		m.armed[t.key()] = c
	}
}

// disarm closes every memory notification (Run, on its way out).
func (m *Manager) disarm() {
	for k, c := range m.armed {
		_ = c.Close()
		delete(m.armed, k)
	}
}
