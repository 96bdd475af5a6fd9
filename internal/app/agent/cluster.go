package agent

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/cluster/certificate"
	"github.com/berthk8s/berth/internal/cluster/events"
	"github.com/berthk8s/berth/internal/cluster/kubeclient"
	"github.com/berthk8s/berth/internal/cluster/mirrorpod"
	"github.com/berthk8s/berth/internal/cluster/nodestatus"
	"github.com/berthk8s/berth/internal/cluster/statussync"
	"github.com/berthk8s/berth/internal/config"
	"github.com/berthk8s/berth/internal/pod/kuberuntime"
	"github.com/berthk8s/berth/internal/pod/podsource"
	"github.com/berthk8s/berth/internal/pod/podstatus"
	"github.com/berthk8s/berth/internal/pod/podsync"
	"github.com/berthk8s/berth/internal/pod/podworker"
	"github.com/berthk8s/berth/internal/pod/syncloop"
	"github.com/berthk8s/berth/internal/podkit/podutil"
	"github.com/berthk8s/berth/internal/serve/metrics"
	"github.com/berthk8s/berth/internal/volumes/objectcache"
)

// cluster holds what berth runs only when it joins a cluster (--kubeconfig)
// and answers the questions Run asks in both modes: in standalone mode its
// API parts are nil and it admits pods against a Node computed locally.
type cluster struct {
	clients  *kubeclient.Clients // nil: standalone
	certs    *certificate.Client
	recorder *events.Recorder
	nodeCtl  *nodestatus.Controller
	lease    *nodestatus.Lease
	api      *podsource.APIWatcher
	status   *statussync.Syncer
	// localNode is the Node admission uses in standalone mode.
	localNode *corev1.Node
	gates     startGates
	nodeName  string
	clock     clock.WithTicker
	// shuttingDown reports a graceful node shutdown under way; set once,
	// before anything runs (nil: never).
	shuttingDown func() bool
}

// startGates are the points the cluster side's start waits on.
type startGates struct {
	// nodeSynced is closed once the Node is registered; the API source
	// lists pods only then, as upstream.
	nodeSynced chan struct{}
	// statusHold, once closed (releaseStatus), lets the node status
	// controller start; it waits at most statusHoldMax for it.
	statusHold  chan struct{}
	releaseOnce sync.Once
}

// newCluster builds the cluster side. sim.base, when set (a simulated
// node), is the rest config the API clients start from in place of the
// node's own certificate client; sim.pods the feed its API pod source
// takes its pods from in place of a watch of its own.
func newCluster(ctx context.Context, cfg *config.Config, version string, inputs *nodestatus.Sampler, clk clock.WithTicker, m *metrics.Metrics,
	podCIDRs func(context.Context, []string), sim simAPI) (*cluster, error) {
	kc := &cfg.Kubelet
	c := &cluster{nodeName: cfg.NodeName, clock: clk}
	c.gates.nodeSynced = make(chan struct{})
	c.gates.statusHold = make(chan struct{})
	if cfg.Kubeconfig == "" {
		c.localNode = nodestatus.InitialNode(inputs.Inputs(ctx), cfg.NodeLabels, cfg.RegisterWithTaints)
		rec, err := events.New(ctx, events.Config{NodeName: cfg.NodeName})
		if err != nil {
			return nil, fmt.Errorf("create event recorder: %w", err)
		}
		c.recorder = rec
		return c, nil
	}
	opts := kubeclient.OptionsFromConfig(cfg, version)
	opts.Base = sim.base
	if sim.base == nil {
		certs, err := newClientCerts(ctx, cfg, version, clk, m)
		if err != nil {
			return nil, err
		}
		c.certs = certs
		opts.Base = certs.Config()
	}
	clients, err := kubeclient.New(opts)
	if err != nil {
		return nil, fmt.Errorf("create API clients: %w", err)
	}
	c.clients = clients
	// The events client carries eventRecordQPS/eventBurst: no second limit.
	if c.recorder, err = events.New(ctx, events.Config{Client: clients.Events, NodeName: cfg.NodeName, QPS: -1, Clock: clk}); err != nil {
		return nil, fmt.Errorf("create event recorder: %w", err)
	}
	if c.nodeCtl, err = nodestatus.New(nodestatus.Config{
		Client: clients.Heartbeat, NodeName: cfg.NodeName, Labels: cfg.NodeLabels, Taints: cfg.RegisterWithTaints,
		Register: kc.RegisterNode == nil || *kc.RegisterNode, Clock: clk,
		UpdateFrequency: kc.NodeStatusUpdateFrequency.Duration, ReportFrequency: kc.NodeStatusReportFrequency.Duration,
		Inputs: c.nodeInputs(inputs), Recorder: c.recorder, PodCIDRs: podCIDRs,
		ResetExtendedResources: inputs.ResetExtendedResources,
	}); err != nil {
		return nil, err
	}
	if c.lease, err = nodestatus.NewLease(nodestatus.LeaseConfig{
		Client: clients.Heartbeat, NodeName: cfg.NodeName, Duration: kc.NodeLeaseDurationSeconds, Clock: clk,
		NodeUID: c.nodeCtl.NodeUID,
	}); err != nil {
		return nil, err
	}
	c.recorder.NodeEventf(corev1.EventTypeNormal, "Starting", "Starting kubelet.")
	if c.api, err = podsource.NewAPISource(podsource.APIConfig{
		Client: clients.Main, NodeName: cfg.NodeName, NodeSynced: c.gates.nodeSynced, Clock: clk, Feed: sim.pods,
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// newClientCerts prepares the node's API credentials (bootstrapping now
// when it must and rotation is off) and, with rotation, upstream's client
// certificate metrics.
func newClientCerts(ctx context.Context, cfg *config.Config, version string, clk clock.WithTicker, m *metrics.Metrics) (*certificate.Client, error) {
	o := certificate.ClientOptions{
		Kubeconfig: cfg.Kubeconfig, BootstrapKubeconfig: cfg.BootstrapKubeconfig, CertDir: cfg.CertDir,
		NodeName: cfg.NodeName, Rotate: cfg.Kubelet.RotateCertificates, UserAgent: kubeclient.UserAgent(version), Clock: clk,
	}
	if !o.Rotate {
		return certificate.NewClient(ctx, o)
	}
	obs, err := m.CertificateObservers(metrics.ClientCertificate)
	if err != nil {
		return nil, err
	}
	o.RenewError = obs.RenewError
	certs, err := certificate.NewClient(ctx, o)
	if err != nil {
		return nil, err
	}
	return certs, m.CertificateTTL(metrics.ClientCertificate, certs.Current)
}

// node is the Node to admit pods against: the registered one in cluster
// mode (nil until registration), the locally computed one in standalone.
func (c *cluster) node() *corev1.Node {
	if c.nodeCtl == nil {
		return c.localNode
	}
	return c.nodeCtl.Node()
}

// nodeAddresses are the addresses of the registered Node's last status,
// nil before registration or in standalone mode.
func (c *cluster) nodeAddresses() []corev1.NodeAddress {
	if n := c.node(); n != nil && c.nodeCtl != nil {
		return n.Status.Addresses
	}
	return nil
}

// mirrors returns the mirror pod keeper, or nil in standalone mode.
func (c *cluster) mirrors(lookup func(fullName string) (*corev1.Pod, bool), terminating func(types.UID) bool) podsync.Mirrors {
	if c.clients == nil {
		return nil
	}
	return &mirrorpod.Keeper{Client: mirrorpod.New(c.clients.Main, c.nodeName, c.nodeCtl.NodeUID), Lookup: lookup, Terminating: terminating}
}

// startStatusSync builds the pod status writer (cluster mode only).
func (c *cluster) startStatusSync(store *podstatus.Store, desired *syncloop.Desired, workers *podworker.Workers,
	observe func(context.Context, statussync.Written)) error {
	if c.clients == nil {
		return nil
	}
	s, err := statussync.New(statussync.Config{
		Client: c.clients.Main, Store: store, Pod: desired.Pod,
		MirrorPod: func(static *corev1.Pod) (*corev1.Pod, bool) {
			m, ok := desired.MirrorPod(podutil.FullName(static))
			return m, ok && mirrorpod.IsMirrorOf(m, static)
		},
		// As upstream (PodCouldBeDeleted): only once the pod's resources
		// are reclaimed, its volumes torn down included.
		CanBeDeleted: workers.ShouldPodBeFinished,
		// As upstream (PodCouldHaveRunningContainers): no terminal phase
		// while a pod's kill, an eviction's say, has not completed.
		CouldHaveRunningContainers: workers.CouldHaveRunningContainers,
		Clock:                      c.clock,
		ObserveWrite:               observe,
	})
	if err != nil {
		return fmt.Errorf("create pod status writer: %w", err)
	}
	c.status = s
	return nil
}

// runs returns the cluster-mode components to run, by name.
func (c *cluster) runs() map[string]func(ctx context.Context) error {
	if c.clients == nil {
		return nil
	}
	runs := map[string]func(ctx context.Context) error{
		"node-status": c.runNodeStatus,
		"node-lease":  c.lease.Run,
		"pod-status":  c.status.Run,
		"node-synced": c.waitNodeSynced,
	}
	if c.certs != nil { // a simulated node's clients are handed their credentials
		// Renews the client certificate (rotateCertificates).
		runs["client-certificate"] = c.certs.Run
	}
	return runs
}

// statusHoldMax bounds how long the node status controller waits for
// statusHold: a first CSINode attempt against a slow or absent API server
// must not keep the Node from registering.
const statusHoldMax = 2 * time.Second

// releaseStatus lets the node status controller start (see statusHold);
// it may be called more than once.
func (c *cluster) releaseStatus() {
	c.gates.releaseOnce.Do(func() { close(c.gates.statusHold) })
}

// runNodeStatus runs the node status controller once statusHold is closed
// or statusHoldMax has passed.
func (c *cluster) runNodeStatus(ctx context.Context) error {
	t := c.clock.NewTimer(statusHoldMax)
	select {
	case <-ctx.Done():
		t.Stop()
		return nil
	case <-c.gates.statusHold:
	case <-t.C():
	}
	t.Stop()
	return c.nodeCtl.Run(ctx)
}

// waitNodeSynced closes nodeSynced once the Node is registered, then waits
// for ctx like every component.
func (c *cluster) waitNodeSynced(ctx context.Context) error {
	t := c.clock.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for c.nodeCtl.Node() == nil {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		}
	}
	close(c.gates.nodeSynced)
	<-ctx.Done()
	return nil
}

// wakeStatus asks the pod status writer for a pass now (cluster mode).
func (c *cluster) wakeStatus(uid types.UID) {
	if c != nil && c.status != nil {
		c.status.Wake(uid)
	}
}

// kickNode asks for a node status update now (cluster mode).
func (c *cluster) kickNode() {
	if c != nil && c.nodeCtl != nil {
		c.nodeCtl.Kick()
	}
}

// pullSecrets reads pods' image pull secrets from the node's source of
// secrets, or is nil in standalone mode (anonymous pulls).
func (c *cluster) pullSecrets(objects *objectcache.Objects) kuberuntime.SecretLookup {
	if c.clients == nil {
		return nil
	}
	return objects.Secret
}

// apiClient is the main API client, or nil in standalone mode.
func (c *cluster) apiClient() kubernetes.Interface {
	if c.clients == nil {
		return nil
	}
	return c.clients.Main
}
