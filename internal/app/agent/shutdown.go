package agent

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/cluster/nodestatus"
	"github.com/berthk8s/berth/internal/node/nodeshutdown"
	"github.com/berthk8s/berth/internal/pod/podworker"
)

// newShutdown builds the graceful node shutdown manager, or returns nil
// when shutdownGracePeriod and shutdownGracePeriodByPodPriority ask for
// none. It ends pods through their workers, with upstream's reason and
// message, and reads n.pods.desired and n.pods.workers, which assemblePods sets first.
func (n *node) newShutdown() (*nodeshutdown.Manager, error) {
	periods := nodeshutdown.Periods(&n.cfg.Kubelet)
	if periods == nil {
		return nil, nil
	}
	m, err := nodeshutdown.New(nodeshutdown.Config{
		Periods: periods,
		Pods:    n.activePods,
		Kill: func(ctx context.Context, pod *corev1.Pod, grace int64) {
			n.pods.workers.Update(ctx, podworker.UpdateOptions{
				Type: podworker.SyncPodKill, Pod: pod, StartTime: n.clock.Now(), KillGracePeriod: &grace,
				KillReason: nodeshutdown.Reason, KillMessage: nodeshutdown.Message,
			})
		},
		Finished: n.pods.workers.ShouldPodBeFinished,
		Changed:  n.cluster.kickNode,
		Event: func(eventType, reason, message string) {
			n.cluster.recorder.NodeEventf(eventType, reason, "%s", message)
		},
		Clock: n.clock,
	})
	if err != nil {
		return nil, fmt.Errorf("create node shutdown manager: %w", err)
	}
	return m, nil
}

// shuttingDown reports whether a graceful node shutdown is under way.
func (n *node) shuttingDown() bool {
	return n.managers.shutdown != nil && n.managers.shutdown.ShuttingDown()
}

// nodeInputs adds what the node status needs beyond the sampler's
// snapshot: whether the node is shutting down.
func (c *cluster) nodeInputs(s *nodestatus.Sampler) func(ctx context.Context) nodestatus.Inputs {
	return func(ctx context.Context) nodestatus.Inputs {
		in := s.Inputs(ctx)
		if c.shuttingDown != nil {
			in.ShuttingDown = c.shuttingDown()
		}
		return in
	}
}
