package kuberuntime

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/berthk8s/berth/internal/containerconfig"
	"github.com/berthk8s/berth/internal/runtimestate"
)

// ListPods returns every pod berth (or a kubelet) created in the runtime,
// keyed by pod UID, from one ListPodSandbox and one ListContainers call.
// Entries hold what listings carry: IDs, states, creation times, attempts,
// names, images, and the hash and restart count from annotations; use
// PodStatus for the rest. Sandboxes and containers without the pod UID
// label are ignored.
func (m *Manager) ListPods(ctx context.Context) (map[types.UID]*runtimestate.Pod, error) {
	sandboxes, err := m.cfg.Runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return nil, fmt.Errorf("list pod sandboxes: %w", err)
	}
	containers, err := m.cfg.Runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{})
	if err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	pods := map[types.UID]*runtimestate.Pod{}
	for _, s := range sandboxes.GetItems() {
		if !containerconfig.Managed(s.GetLabels()) {
			continue
		}
		p := podFor(pods, s.GetLabels())
		p.Sandboxes = append(p.Sandboxes, sandboxFromList(s))
	}
	for _, c := range containers.GetContainers() {
		if !containerconfig.Managed(c.GetLabels()) {
			continue
		}
		p := podFor(pods, c.GetLabels())
		p.Containers = append(p.Containers, containerFromList(c))
	}
	for _, p := range pods {
		sortPod(p)
	}
	return pods, nil
}
