package agent

import (
	"context"
	"fmt"

	"github.com/berthk8s/berth/internal/node/userns"
	"github.com/berthk8s/berth/internal/platform/cri"
)

// newUserNamespaces builds the user namespace manager: the kubelet user's
// ID range, checked against idsPerPod and maxPods, and the mappings of the
// pods already on disk. Whether the runtime supports user namespaces is
// read from its latest Status at each pod's sandbox, as upstream.
func (n *node) newUserNamespaces(ctx context.Context) (*userns.Manager, error) {
	kc := &n.cfg.Kubelet
	idsPerPod := n.cfg.IDsPerPod()
	if idsPerPod == 0 {
		idsPerPod = userns.DefaultIDsPerPod
	}
	r, err := userns.KubeletRange(ctx, userns.OSHost(), idsPerPod)
	if err != nil {
		return nil, fmt.Errorf("kubelet mappings: %w", err)
	}
	mgr, err := userns.New(ctx, userns.Config{
		PodsDir: n.podsDir(), IDsPerPod: idsPerPod, MaxPods: int(kc.MaxPods), Range: r,
		Handlers: func() []cri.RuntimeHandler { return n.conn.health.Info().Handlers },
	})
	if err != nil {
		return nil, fmt.Errorf("create user namespace manager: %w", err)
	}
	return mgr, nil
}
