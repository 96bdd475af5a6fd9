package nodestatus

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// Upstream's lease numbers.
const (
	// leaseRenewFraction of the lease duration is the renew interval
	// (nodeLeaseRenewIntervalFraction).
	leaseRenewFraction = 0.25
	// leaseUpdateRetries is how many updates one renewal tries.
	leaseUpdateRetries = 5
	// leaseBackoffStart doubles before the first wait: 200 ms, 400 ms, ...
	leaseBackoffStart = 100 * time.Millisecond
	leaseBackoffMax   = 7 * time.Second
)

// LeaseConfig is what a Lease needs.
type LeaseConfig struct {
	// Client is the heartbeat client: Leases get, create and update.
	Client   kubernetes.Interface
	NodeName string
	// Duration is nodeLeaseDurationSeconds (40); the lease is renewed every
	// quarter of it.
	Duration int32
	Clock    clock.WithTicker
	// NodeUID returns the Node's UID, or "" while it is not known; the
	// lease is created only once it is, owned by the Node.
	NodeUID func() types.UID
}

// Lease keeps kube-node-lease/<node> renewed: the node's heartbeat. Run is
// its only goroutine.
type Lease struct {
	cfg   LeaseConfig
	renew time.Duration
}

// NewLease validates cfg and returns a Lease; it starts nothing.
func NewLease(cfg LeaseConfig) (*Lease, error) {
	if cfg.Client == nil || cfg.NodeName == "" || cfg.Clock == nil || cfg.NodeUID == nil {
		return nil, fmt.Errorf("create node lease: Client, NodeName, Clock and NodeUID are required")
	}
	if cfg.Duration <= 0 {
		return nil, fmt.Errorf("create node lease: duration %d must be positive", cfg.Duration)
	}
	d := time.Duration(cfg.Duration) * time.Second
	return &Lease{cfg: cfg, renew: time.Duration(float64(d) * leaseRenewFraction)}, nil
}

// Run ensures the lease exists and renews it until ctx ends; it returns nil
// then. The lease is left in place: it expires on its own.
func (l *Lease) Run(ctx context.Context) error {
	var latest *coordinationv1.Lease
	for {
		latest = l.sync(ctx, latest)
		select {
		case <-ctx.Done():
			return nil
		case <-l.cfg.Clock.After(l.renew):
		}
	}
}

// sync renews the lease from the latest one berth wrote, which saves a GET;
// failing that it gets or creates the lease and renews it. It returns the
// lease to start from next time.
func (l *Lease) sync(ctx context.Context, latest *coordinationv1.Lease) *coordinationv1.Lease {
	logger := klog.FromContext(ctx).WithValues("lease", klog.KRef(corev1.NamespaceNodeLease, l.cfg.NodeName))
	if latest != nil {
		renewed, err := l.retryUpdate(ctx, latest)
		if err == nil {
			return renewed
		}
		logger.Info("Failed to update lease using latest lease, fallback to ensure lease", "err", err)
	}
	lease, created := l.backoffEnsure(ctx)
	if lease == nil || created {
		return lease
	}
	renewed, err := l.retryUpdate(ctx, lease)
	if err != nil {
		logger.Error(err, "Will retry updating lease", "interval", l.renew)
		return lease
	}
	return renewed
}

// backoffEnsure gets or creates the lease, waiting 200 ms doubling to 7 s
// between failures, until it has one or ctx ends (nil).
func (l *Lease) backoffEnsure(ctx context.Context) (lease *coordinationv1.Lease, created bool) {
	sleep := leaseBackoffStart
	for {
		lease, created, err := l.ensure(ctx)
		if err == nil {
			return lease, created
		}
		sleep = min(2*sleep, leaseBackoffMax)
		klog.FromContext(ctx).Error(err, "Failed to ensure lease exists, will retry", "interval", sleep)
		select {
		case <-ctx.Done():
			return nil, false
		case <-l.cfg.Clock.After(sleep):
		}
	}
}

// ensure gets the lease, or creates it once the Node's UID is known.
func (l *Lease) ensure(ctx context.Context) (*coordinationv1.Lease, bool, error) {
	leases := l.cfg.Client.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	lease, err := leases.Get(ctx, l.cfg.NodeName, metav1.GetOptions{})
	if err == nil {
		return lease, false, nil
	}
	if !apierrors.IsNotFound(err) {
		return nil, false, fmt.Errorf("get lease %q: %w", l.cfg.NodeName, err)
	}
	next := l.next(nil)
	if len(next.OwnerReferences) == 0 {
		return nil, false, fmt.Errorf("create lease %q: node not registered yet", l.cfg.NodeName)
	}
	lease, err = leases.Create(ctx, next, metav1.CreateOptions{})
	if err != nil {
		return nil, false, fmt.Errorf("create lease %q: %w", l.cfg.NodeName, err)
	}
	return lease, true, nil
}

// retryUpdate renews base up to five times; a conflict fetches the lease
// again first, a missing lease gives up at once (sync then re-creates it).
func (l *Lease) retryUpdate(ctx context.Context, base *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	leases := l.cfg.Client.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	var err error
	for range leaseUpdateRetries {
		var renewed *coordinationv1.Lease
		renewed, err = leases.Update(ctx, l.next(base), metav1.UpdateOptions{})
		switch {
		case err == nil:
			return renewed, nil
		case apierrors.IsNotFound(err):
			return nil, fmt.Errorf("update lease %q: %w", l.cfg.NodeName, err)
		case apierrors.IsConflict(err):
			if base, _ = l.backoffEnsure(ctx); base == nil {
				return nil, fmt.Errorf("update lease %q: %w", l.cfg.NodeName, err)
			}
		default:
			klog.FromContext(ctx).Error(err, "Failed to update lease")
		}
	}
	return nil, fmt.Errorf("update lease %q: %d attempts failed, last: %w", l.cfg.NodeName, leaseUpdateRetries, err)
}

// next returns the lease to write: a new one (base nil) or a copy of base,
// with the duration, a renew time of now, and the Node as owner once its
// UID is known.
func (l *Lease) next(base *coordinationv1.Lease) *coordinationv1.Lease {
	var lease *coordinationv1.Lease
	if base == nil {
		holder := l.cfg.NodeName
		lease = &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: l.cfg.NodeName, Namespace: corev1.NamespaceNodeLease},
			Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder},
		}
	} else {
		lease = base.DeepCopy()
	}
	d := l.cfg.Duration
	lease.Spec.LeaseDurationSeconds = &d
	lease.Spec.RenewTime = &metav1.MicroTime{Time: l.cfg.Clock.Now()}
	if uid := l.cfg.NodeUID(); len(lease.OwnerReferences) == 0 && uid != "" {
		lease.OwnerReferences = []metav1.OwnerReference{{
			APIVersion: "v1", Kind: "Node", Name: l.cfg.NodeName, UID: uid,
		}}
	}
	return lease
}
