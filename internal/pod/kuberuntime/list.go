package kuberuntime

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/types"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	kubelettypes "k8s.io/kubelet/pkg/types"

	"github.com/berthk8s/berth/internal/pod/containerconfig"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// ListPods returns every pod berth (or a kubelet) created in the runtime,
// keyed by pod UID, from one ListPodSandbox and one ListContainers call.
// Entries hold what listings carry: IDs, states, creation times, attempts,
// names, images, and the hash and restart count from annotations; use
// PodStatus for the rest. Sandboxes and containers without the pod UID
// label are ignored.
func (m *Manager) ListPods(ctx context.Context) (map[types.UID]*runtimestate.Pod, error) {
	return m.list(ctx, nil)
}

// ListPod is ListPods for one pod: its sandboxes and containers, from one
// ListPodSandbox and one ListContainers call filtered by the pod UID label.
// It returns nil when the runtime has nothing of the pod.
func (m *Manager) ListPod(ctx context.Context, uid types.UID) (*runtimestate.Pod, error) {
	pods, err := m.list(ctx, map[string]string{kubelettypes.KubernetesPodUIDLabel: string(uid)})
	if err != nil {
		return nil, err
	}
	return pods[uid], nil
}

// list lists the sandboxes and containers whose labels match selector
// (nil: all) and groups the managed ones by pod UID.
func (m *Manager) list(ctx context.Context, selector map[string]string) (map[types.UID]*runtimestate.Pod, error) {
	sreq := &runtimeapi.ListPodSandboxRequest{}
	creq := &runtimeapi.ListContainersRequest{}
	if selector != nil {
		sreq.Filter = &runtimeapi.PodSandboxFilter{LabelSelector: selector}
		creq.Filter = &runtimeapi.ContainerFilter{LabelSelector: selector}
	}
	sandboxes, err := m.cfg.Runtime.ListPodSandbox(ctx, sreq)
	if err != nil {
		return nil, fmt.Errorf("list pod sandboxes: %w", err)
	}
	containers, err := m.cfg.Runtime.ListContainers(ctx, creq)
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
