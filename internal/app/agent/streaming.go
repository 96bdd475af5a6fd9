package agent

import (
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berthk8s/berth/internal/platform/containerlogs"
	"github.com/berthk8s/berth/internal/pod/pleg"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
	"github.com/berthk8s/berth/internal/serve/streaming"
)

// streamingHandlers are the kubelet API's container endpoints: logs,
// exec, attach, port-forward and run. Built once by assemble; read-only.
type streamingHandlers struct {
	ContainerLogs, Exec, Attach, PortForward, Run http.Handler
}

// newStreamingHandlers builds the container endpoints over the pods the
// sync loop knows (with their latest status) and the runtime's view of
// them in the PLEG cache. It reads n.pods.desired and n.pods.statuses when serving.
func (n *node) newStreamingHandlers(cache *pleg.Cache) (streamingHandlers, error) {
	kc := &n.cfg.Kubelet
	container := func(uid types.UID, id string) (runtimestate.Container, bool) {
		p, _ := cache.Get(uid)
		for _, c := range p.Containers {
			if c.ID == id {
				return c, true
			}
		}
		return runtimestate.Container{}, false
	}
	runtimePod := func(uid types.UID) *runtimestate.Pod {
		p, _ := cache.Get(uid)
		return p
	}
	logs, err := containerlogs.NewHandler(containerlogs.Config{
		Pod: n.podByName, Container: container, PodLogsDir: kc.PodLogsDir, Clock: n.clock,
	})
	if err != nil {
		return streamingHandlers{}, fmt.Errorf("create container logs handler: %w", err)
	}
	srv, err := streaming.New(streaming.Config{
		Runtime: n.conn.client.Runtime, Pod: n.podByName, RuntimePod: runtimePod,
		IdleTimeout: kc.StreamingConnectionIdleTimeout.Duration, Clock: n.clock,
	})
	if err != nil {
		return streamingHandlers{}, fmt.Errorf("create streaming handlers: %w", err)
	}
	return streamingHandlers{
		ContainerLogs: logs, Exec: srv.Exec(), Attach: srv.Attach(), PortForward: srv.PortForward(), Run: srv.Run(),
	}, nil
}

// podByName returns the pod berth runs with that namespace and name,
// carrying its latest status.
func (n *node) podByName(namespace, name string) (*corev1.Pod, bool) {
	for _, p := range n.pods.desired.Pods() {
		if p.Namespace != namespace || p.Name != name {
			continue
		}
		c := p.DeepCopy()
		if st, ok := n.pods.statuses.Get(p.UID); ok {
			c.Status = st
		}
		return c, true
	}
	return nil, false
}
