package nodestatus

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// Upstream's retry numbers.
const (
	// statusUpdateRetries is how many times one sync tries to update the
	// status (nodeStatusUpdateRetry).
	statusUpdateRetries = 5
	// retryAfterFailure is how soon after a sync whose update failed the
	// next one comes, with one attempt (a probe of the API server: one
	// request a second while it is away), rather than UpdateFrequency
	// later with five: the Node's status and heartbeat are written within
	// about a second of the API server's return (upstream's waits out its
	// period, up to 10 s, while the node lifecycle controller may have
	// marked the Node Unknown meanwhile).
	retryAfterFailure = time.Second
	// registerBackoffStart and registerBackoffMax bound the wait between
	// registration attempts.
	registerBackoffStart = 100 * time.Millisecond
	registerBackoffMax   = 7 * time.Second
)

// Recorder records an event about the Node. The agent's event recorder
// implements it.
type Recorder interface {
	NodeEventf(eventType, reason, messageFmt string, args ...any)
}

// Config is what a Controller needs. Labels and Taints must not be changed
// once New has been called.
type Config struct {
	// Client is the heartbeat client: Nodes get, create and patch.
	Client   kubernetes.Interface
	NodeName string
	// Labels (--node-labels) and Taints (--register-with-taints) go on the
	// Node berth registers.
	Labels map[string]string
	Taints []corev1.Taint
	// Register is registerNode: create the Node if it does not exist.
	Register bool
	Clock    clock.WithTicker
	// UpdateFrequency is nodeStatusUpdateFrequency: how often the status
	// is computed. ReportFrequency is nodeStatusReportFrequency: how often
	// it is sent when nothing changed.
	UpdateFrequency time.Duration
	ReportFrequency time.Duration
	// Inputs returns a fresh snapshot; called from Run's goroutine.
	Inputs func(ctx context.Context) Inputs
	// Recorder may be nil: then events are only logged.
	Recorder Recorder
	// Rand returns a number in [0, 1) that spreads the reports of many
	// nodes over time, as upstream's jitter; nil means no jitter.
	Rand func() float64
	// PodCIDRs, if set, is given the Node's spec.podCIDRs whenever a
	// status update reads a Node that has some (upstream's updateNode
	// hands them to updatePodCIDR).
	PodCIDRs func(ctx context.Context, cidrs []string)
	// ResetExtendedResources, if set and true at registration, zeroes the
	// extended resources of a Node that already existed (upstream's
	// reconcileExtendedResource).
	ResetExtendedResources func() bool
}

// Controller owns berth's Node object: it registers the Node and keeps its
// status current. Run is its only goroutine; Node may be called from any
// goroutine.
type Controller struct {
	cfg Config
	// kick wakes Run for an update before the period ends; capacity 1.
	kick chan struct{}
	// node is the latest Node the API server returned; never mutated once
	// stored.
	node atomic.Pointer[corev1.Node]
}

// New validates cfg and returns a Controller; it starts nothing.
func New(cfg Config) (*Controller, error) {
	var missing []string
	if cfg.Client == nil {
		missing = append(missing, "Client")
	}
	if cfg.NodeName == "" {
		missing = append(missing, "NodeName")
	}
	if cfg.Clock == nil {
		missing = append(missing, "Clock")
	}
	if cfg.Inputs == nil {
		missing = append(missing, "Inputs")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("create node status controller: missing %v", missing)
	}
	if cfg.UpdateFrequency <= 0 || cfg.ReportFrequency <= 0 {
		return nil, fmt.Errorf("create node status controller: update frequency %v and report frequency %v must be positive", cfg.UpdateFrequency, cfg.ReportFrequency)
	}
	return &Controller{cfg: cfg, kick: make(chan struct{}, 1)}, nil
}

// Node returns the latest Node the API server returned, or nil before the
// first. The caller must not modify it.
func (c *Controller) Node() *corev1.Node { return c.node.Load() }

// NodeUID returns the Node's UID once known, else "". It suits
// LeaseConfig.NodeUID.
func (c *Controller) NodeUID() types.UID {
	if n := c.Node(); n != nil {
		return n.UID
	}
	return ""
}

// Kick asks Run for a status update now, e.g. when the runtime's readiness
// changed: a Ready node need not wait for the next period. It never blocks;
// kicks that arrive while one is pending merge into it.
func (c *Controller) Kick() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// Run registers the Node (when Register is set) and then updates its status
// UpdateFrequency after the end of each update (as upstream's sliding
// period) until ctx ends. It returns nil when ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	l := &loop{c: c}
	retrying := false
	for {
		wait := c.cfg.UpdateFrequency
		if retrying = !l.sync(ctx, retrying); retrying {
			wait = min(retryAfterFailure, wait)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-c.kick:
		case <-c.cfg.Clock.After(wait):
		}
	}
}

// errNodeGone means the Node was deleted under us.
var errNodeGone = errors.New("node not found")

// loop is the state of Run's goroutine; nothing else touches it.
type loop struct {
	c          *Controller
	registered bool
	// lastReport is when the status was last sent; delay is the jitter
	// added to ReportFrequency since the last change.
	lastReport time.Time
	delay      time.Duration
}

// sync registers if needed and updates the status (updateStatus; retrying:
// the last sync's update failed); it reports whether the update went
// through. A Node deleted under berth is registered again at once.
func (l *loop) sync(ctx context.Context, retrying bool) bool {
	logger := klog.FromContext(ctx)
	for range 2 {
		if l.c.cfg.Register && !l.registered && !l.register(ctx) {
			return false
		}
		err := l.updateStatus(ctx, retrying)
		if err == nil {
			return true
		}
		logger.Error(err, "Unable to update node status", "node", klog.KRef("", l.c.cfg.NodeName))
		if !errors.Is(err, errNodeGone) || !l.c.cfg.Register {
			return false
		}
		l.registered = false
	}
	return false
}

// register tries to register the Node until it succeeds (true) or ctx ends
// (false), waiting 100 ms doubling to 7 s between attempts.
func (l *loop) register(ctx context.Context) bool {
	logger := klog.FromContext(ctx).WithValues("node", klog.KRef("", l.c.cfg.NodeName))
	step := registerBackoffStart
	for {
		logger.Info("Attempting to register node")
		if l.tryRegister(ctx) {
			logger.Info("Successfully registered node")
			l.registered = true
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-l.c.cfg.Clock.After(step):
		}
		step = min(2*step, registerBackoffMax)
	}
}

// tryRegister creates the Node, or reconciles the existing one as upstream
// does, and says whether the Node now exists.
func (l *loop) tryRegister(ctx context.Context) bool {
	logger := klog.FromContext(ctx).WithValues("node", klog.KRef("", l.c.cfg.NodeName))
	nodes := l.c.cfg.Client.CoreV1().Nodes()
	node, events := initialNode(l.c.cfg.Inputs(ctx), l.c.cfg.Labels, l.c.cfg.Taints)
	l.record(ctx, events)
	created, err := nodes.Create(ctx, node, metav1.CreateOptions{})
	if err == nil {
		// A created Node carries its status: that is a report.
		l.lastReport = l.c.cfg.Clock.Now()
		l.c.node.Store(created)
		return true
	}
	if !apierrors.IsAlreadyExists(err) && !apierrors.IsForbidden(err) {
		logger.Error(err, "Unable to register node with API server")
		return false
	}
	existing, err := nodes.Get(ctx, l.c.cfg.NodeName, metav1.GetOptions{})
	if err != nil {
		logger.Error(err, "Unable to register node with API server, error getting existing node")
		return false
	}
	logger.Info("Node was previously registered")
	orig := existing.DeepCopy()
	reset := l.c.cfg.ResetExtendedResources != nil && l.c.cfg.ResetExtendedResources()
	if ReconcileExisting(node, existing, reset) {
		if existing, err = l.patch(ctx, orig, existing); err != nil {
			logger.Error(err, "Unable to reconcile node with API server")
			return false
		}
	}
	l.c.node.Store(existing)
	return true
}

// updateStatus tries up to statusUpdateRetries times to update the status,
// the first try reading the Node from the API server's cache and the
// others from storage; when retrying after a failed sync, once, from
// storage (a restarted API server's cache may still be filling).
func (l *loop) updateStatus(ctx context.Context, retrying bool) error {
	attempts := statusUpdateRetries
	if retrying {
		attempts = 1
	}
	var err error
	for try := range attempts {
		if err = l.tryUpdateStatus(ctx, try == 0 && !retrying); err == nil || errors.Is(err, errNodeGone) {
			return err
		}
		klog.FromContext(ctx).V(2).Info("Error updating node status, will retry", "err", err)
	}
	return fmt.Errorf("update status of node %q: %d attempts failed, last: %w", l.c.cfg.NodeName, attempts, err)
}

// tryUpdateStatus reads the Node (from the API server's cache when
// fromCache, as upstream's older kubelets did on a first try and its lister
// does now; else from storage), computes
// the status, and patches it when it changed or ReportFrequency (plus
// jitter) has passed since the last report.
func (l *loop) tryUpdateStatus(ctx context.Context, fromCache bool) error {
	opts := metav1.GetOptions{}
	if fromCache {
		opts.ResourceVersion = "0"
	}
	orig, err := l.c.cfg.Client.CoreV1().Nodes().Get(ctx, l.c.cfg.NodeName, opts)
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("get node %q: %w", l.c.cfg.NodeName, errNodeGone)
	}
	if err != nil {
		return fmt.Errorf("get node %q: %w", l.c.cfg.NodeName, err)
	}
	l.c.node.Store(orig)
	if len(orig.Spec.PodCIDRs) != 0 && l.c.cfg.PodCIDRs != nil {
		l.c.cfg.PodCIDRs(ctx, orig.Spec.PodCIDRs)
	}
	in := l.c.cfg.Inputs(ctx)
	node := orig.DeepCopy()
	labelsChanged := EnsureOSArchLabels(node, in)
	events := Apply(node, in)
	changed := labelsChanged || StatusChanged(&orig.Status, &node.Status)
	now := l.c.cfg.Clock.Now()
	if !changed && now.Sub(l.lastReport) < l.c.cfg.ReportFrequency+l.delay {
		return nil
	}
	l.delay = 0
	if (changed || l.lastReport.IsZero()) && l.c.cfg.Rand != nil {
		l.delay = time.Duration(float64(l.c.cfg.ReportFrequency) * (l.c.cfg.Rand() - 0.5))
	}
	updated, err := l.patch(ctx, orig, node)
	if err != nil {
		return err
	}
	l.lastReport = now
	l.c.node.Store(updated)
	l.record(ctx, events)
	return nil
}

// patch sends the strategic merge patch from orig to node to the status
// subresource.
func (l *loop) patch(ctx context.Context, orig, node *corev1.Node) (*corev1.Node, error) {
	data, err := StatusPatch(orig, node)
	if err != nil {
		return nil, err
	}
	updated, err := l.c.cfg.Client.CoreV1().Nodes().Patch(ctx, l.c.cfg.NodeName, types.StrategicMergePatchType, data, metav1.PatchOptions{}, "status")
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("patch status of node %q: %w", l.c.cfg.NodeName, errNodeGone)
	}
	if err != nil {
		return nil, fmt.Errorf("patch status of node %q: %w", l.c.cfg.NodeName, err)
	}
	return updated, nil
}

// record logs the events and hands them to the recorder.
func (l *loop) record(ctx context.Context, events []Event) {
	logger := klog.FromContext(ctx)
	for _, e := range events {
		logger.V(2).Info("Recording event message for node", "node", klog.KRef("", l.c.cfg.NodeName), "event", e.Reason)
		if l.c.cfg.Recorder != nil {
			l.c.cfg.Recorder.NodeEventf(e.Type, e.Reason, "%s", e.Message)
		}
	}
}
