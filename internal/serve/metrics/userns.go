package metrics

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// UserNamespaces are upstream's user namespace pod start metrics:
// kubelet_started_user_namespaced_pods_total counts each sync that
// creates the sandbox of a pod with hostUsers: false, and
// kubelet_started_user_namespaced_pods_errors_total those of them that
// failed (a refusal by a runtime without user namespace support
// included), as upstream's SyncPod counts them.
type UserNamespaces struct {
	started, errors prometheus.Counter
}

func newUserNamespaces() *UserNamespaces {
	return &UserNamespaces{
		started: prometheus.NewCounter(prometheus.CounterOpts{
			Subsystem: "kubelet", Name: "started_user_namespaced_pods_total",
			Help: alpha + "Cumulative number of pods with user namespaces started. This metric will only be collected on Linux.",
		}),
		errors: prometheus.NewCounter(prometheus.CounterOpts{
			Subsystem: "kubelet", Name: "started_user_namespaced_pods_errors_total",
			Help: alpha + "Cumulative number of errors when starting pods with user namespaces. This metric will only be collected on Linux.",
		}),
	}
}

// NewUserNamespaces registers the user namespace pod start metrics; call
// it once.
func (m *Metrics) NewUserNamespaces() (*UserNamespaces, error) {
	u := newUserNamespaces()
	for _, c := range []prometheus.Collector{u.started, u.errors} {
		if err := m.reg.Register(c); err != nil {
			return nil, fmt.Errorf("register user namespace metrics: %w", err)
		}
	}
	return u, nil
}

// PodStarted counts one sync that created (or tried to create) the
// sandbox of a pod with its own user namespace; failed says whether any
// step of that sync failed. It is a kuberuntime.Observers
// UserNamespacedPodStarted function.
func (u *UserNamespaces) PodStarted(failed bool) {
	u.started.Inc()
	if failed {
		u.errors.Inc()
	}
}
