package agent

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	cbtracing "k8s.io/component-base/tracing"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/cluster/nodestatus"
	"github.com/berthk8s/berth/internal/config"
	"github.com/berthk8s/berth/internal/images/pullrecords"
	"github.com/berthk8s/berth/internal/node/cm"
	"github.com/berthk8s/berth/internal/node/cpumanager"
	"github.com/berthk8s/berth/internal/node/devicemanager"
	"github.com/berthk8s/berth/internal/node/dra"
	"github.com/berthk8s/berth/internal/node/eviction"
	"github.com/berthk8s/berth/internal/node/memorymanager"
	"github.com/berthk8s/berth/internal/node/nodeshutdown"
	"github.com/berthk8s/berth/internal/node/topology"
	"github.com/berthk8s/berth/internal/node/userns"
	"github.com/berthk8s/berth/internal/platform/cri"
	"github.com/berthk8s/berth/internal/platform/machine"
	"github.com/berthk8s/berth/internal/platform/pluginmanager"
	"github.com/berthk8s/berth/internal/platform/tracing"
	"github.com/berthk8s/berth/internal/pod/admission"
	"github.com/berthk8s/berth/internal/pod/allocation"
	"github.com/berthk8s/berth/internal/pod/declaredfeatures"
	"github.com/berthk8s/berth/internal/pod/housekeeping"
	"github.com/berthk8s/berth/internal/pod/kuberuntime"
	"github.com/berthk8s/berth/internal/pod/pleg"
	"github.com/berthk8s/berth/internal/pod/podgone"
	"github.com/berthk8s/berth/internal/pod/podplan"
	"github.com/berthk8s/berth/internal/pod/podstatus"
	"github.com/berthk8s/berth/internal/pod/podsync"
	"github.com/berthk8s/berth/internal/pod/podworker"
	"github.com/berthk8s/berth/internal/pod/prober"
	"github.com/berthk8s/berth/internal/pod/syncloop"
	"github.com/berthk8s/berth/internal/pod/timeline"
	"github.com/berthk8s/berth/internal/podkit/podutil"
	"github.com/berthk8s/berth/internal/podkit/sysctl"
	"github.com/berthk8s/berth/internal/serve/metrics"
	"github.com/berthk8s/berth/internal/serve/server"
	"github.com/berthk8s/berth/internal/volumes/csi"
	"github.com/berthk8s/berth/internal/volumes/objectcache"
	"github.com/berthk8s/berth/internal/volumes/podcert"
	"github.com/berthk8s/berth/internal/volumes/subpath"
	"github.com/berthk8s/berth/internal/volumes/transient"
	"github.com/berthk8s/berth/internal/volumes/volume"
)

// The object cache is the environment's source: configMaps, secrets,
// services and the node's allocatable.
var _ kuberuntime.EnvSource = (*objectcache.Objects)(nil)

// Fixed periods, as upstream. The PLEG's relist period is upstream's
// unless --pleg-relist-period lengthens it.
const (
	plegThreshold       = 3 * time.Minute
	runtimeCheckPeriod  = 5 * time.Second
	workerBackoffPeriod = 10 * time.Second
	// stopBudget bounds how long berth waits for its components to stop
	// (and then for its pod workers) after SIGTERM or a failure; a
	// component still running then is left behind as the process exits.
	// Stopping berth never stops a pod.
	stopBudget = 30 * time.Second
)

// node is berth assembled: every component built, none started, grouped
// by wing. Run owns it; the fields are set once by assemble.
type node struct {
	cfg *config.Config
	// set are cfg's settings, resolved once (config.Settings).
	set      config.Settings
	clock    clock.WithTicker
	conn     runtimeConn
	cluster  *cluster
	metrics  *metrics.Metrics
	pods     podPath
	vols     volumeWing
	managers resourceManagers
	guards   guards
	serve    servers
	// sim is what a simulated node is handed in place of its host's
	// (simulated.go); nil on a real node.
	sim *Simulated
}

// runtimeConn is the connection to the container runtime and what traces
// it.
type runtimeConn struct {
	client *cri.Client
	health *cri.Health
	// tracer exports spans (kubelet tracing); nil without tracing.
	tracer cbtracing.TracerProvider
}

// podPath is the pod wing: from the sources through the sync loop and the
// workers to the runtime, and what they read.
type podPath struct {
	runtime  *kuberuntime.Manager
	relister *pleg.PLEG
	statuses *podstatus.Store
	prober   *prober.Prober
	workers  *podworker.Workers
	sources  *sources
	loop     *syncloop.Loop
	// desired is the sync loop's published view of the desired pods,
	// built before the loop and every reader of it.
	desired *syncloop.Desired
	// alloc holds the pods' allocations and actuations (in-place resize).
	alloc *allocation.Manager
	// declared are the node's declared features, fixed at start: node
	// status and admission.
	declared *declaredfeatures.Declared
	// timeline records the stages of the pods' starts (GET
	// /pods/{namespace}/{pod}/timeline).
	timeline *timeline.Recorder
}

// volumeWing is the volume manager and the objects volumes and
// environments are made of.
type volumeWing struct {
	manager *volume.Manager
	objects *objectcache.Objects
	// csi handles the CSI drivers that register, mounter publishes CSI
	// volumes through them (both nil standalone).
	csi     *csi.Handler
	mounter *csi.Mounter
	// podCerts keeps the podCertificate projections' keys and
	// certificates (nil standalone).
	podCerts *podcert.Manager
}

// resourceManagers are the node wing's managers that pods are admitted by
// and placed with, and the guards that end pods (eviction, shutdown).
type resourceManagers struct {
	// cgroups is the container manager; nil without cgroupsPerQOS.
	cgroups *cm.Manager
	// system keeps systemCgroups; nil without it.
	system *cm.SystemCgroup
	// cpus is the CPU manager: admission, containers' cpusets.
	cpus *cpumanager.Manager
	// topology is the topology manager; nil with topologyManagerPolicy none.
	topology *topology.Manager
	// devices is the device manager: device plugins, their resources and
	// the containers' devices.
	devices *devicemanager.Manager
	// memory is the memory manager: admission, containers' cpuset.mems.
	memory *memorymanager.Manager
	// userns gives hostUsers: false pods their user namespace.
	userns *userns.Manager
	// pullRecords are the image pull records; nil with
	// KubeletEnsureSecretPulledImages off.
	pullRecords *pullrecords.Manager
	// evictor is the eviction manager; nodestatus and admission read it.
	evictor *eviction.Manager
	// shutdown is the graceful node shutdown manager (nil: none).
	shutdown *nodeshutdown.Manager
	// plugins registers the node plugins (CSI, DRA) that announce
	// themselves in <root-dir>/plugins_registry.
	plugins *pluginmanager.Manager
	// dra prepares pods' ResourceClaims with the DRA drivers.
	dra *dra.Manager
}

// servers are what the kubelet API serves beside the pod path.
type servers struct {
	certs   *servingCerts
	streams streamingHandlers
	observe observability
	// probeMetrics serves the prober's registry on /metrics/probes.
	probeMetrics http.Handler
	// podAPIs are the pod resources API and the Pods API.
	podAPIs podAPIs
}

// Run builds berth from cfg and runs it until ctx ends. version is berth's
// own version (for the API user agent); clk is the clock every component
// reads (clock.RealClock{} outside tests). Start order: runtime connection,
// runtime manager, PLEG, pod workers, (in cluster mode) API clients, node
// status, lease and status writer, sources, stats, log rotation, container
// and image GC, eviction, CPU and plugin managers, sync loop, servers.
// When ctx ends or a component fails, they stop in the reverse order;
// stopping berth never stops a pod.
func Run(ctx context.Context, cfg *config.Config, version string, clk clock.WithTicker) error {
	return runWith(ctx, cfg, version, clk, osProcess())
}

// runWith is Run with the setters of berth's own process injected
// (tuneProcess), so tests do not change the test process.
func runWith(ctx context.Context, cfg *config.Config, version string, clk clock.WithTicker, process processSetters) error {
	ctx = klog.NewContext(ctx, klog.FromContext(ctx).WithValues("node", cfg.NodeName))
	n, err := assemble(ctx, cfg, version, clk, nil)
	if err != nil {
		return err
	}
	defer n.close()
	tuneProcess(ctx, cfg, process)
	return n.run(ctx)
}

// assemble connects to the runtime and builds every component; sim is
// nil on a real node.
func assemble(ctx context.Context, cfg *config.Config, version string, clk clock.WithTicker, sim *Simulated) (*node, error) {
	kc := &cfg.Kubelet
	n := &node{cfg: cfg, set: cfg.Settings(), clock: clk, pods: podPath{desired: syncloop.NewDesired()}, sim: sim}
	m, err := newMetrics(cfg.NodeName, n.clock)
	if err != nil {
		return nil, err
	}
	n.metrics = m
	if n.conn.tracer, err = tracing.New(ctx, kc.Tracing, cfg.NodeName); err != nil {
		return nil, err
	}
	client, info, err := n.connectRuntime(ctx, m.ObserveCRI)
	if err != nil {
		n.shutdownTracing(ctx)
		return nil, err
	}
	n.conn.client = client
	driver, overridden := cm.PickDriver(kc.CgroupDriver, info.CgroupDriver)
	if overridden {
		klog.FromContext(ctx).Info("Using the container runtime's cgroup driver", "configured", kc.CgroupDriver, "runtime", info.CgroupDriver)
	}
	klog.FromContext(ctx).Info("Connected to container runtime", "runtime", info.RuntimeName, "version", info.RuntimeVersion,
		"apiVersion", info.RuntimeAPIVersion, "cgroupDriver", driver)
	info.CgroupDriver = driver
	if err := n.assembleRest(ctx, info, version); err != nil {
		n.close()
		return nil, err
	}
	return n, nil
}

func (n *node) assembleRest(ctx context.Context, info cri.Info, version string) error {
	cfg := n.cfg
	for _, dir := range []string{cfg.RootDir, n.podsDir(), cfg.Kubelet.PodLogsDir} {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return fmt.Errorf("create directory %q: %w", dir, err)
		}
	}
	ips, host, err := n.hostFacts()
	if err != nil {
		return err
	}
	// Node status is kicked when the runtime's health changes.
	n.conn.health = cri.NewHealth(n.conn.client, n.clock, runtimeCheckPeriod, func() { n.cluster.kickNode() })
	n.conn.health.Check(ctx) // a first verdict before anything asks for one
	if n.pods.declared, err = declareFeatures(ctx, cfg, info); err != nil {
		return err
	}
	inputs, err := nodestatus.NewSampler(cfg, host, info, ips, n.conn.health, n.conn.client.Image, n.clock,
		nodestatus.Guards{Pressure: n.pressure, Storage: n.storageErr, VolumesInUse: n.volumesInUse, DevicePlugins: n.devicePlugins,
			ResetExtendedResources: n.resetExtendedResources}, n.pods.declared.Names())
	if err != nil {
		return fmt.Errorf("read machine information: %w", err)
	}
	if err := cfg.CheckHost(ctx, inputs.Machine()); err != nil {
		return err
	}
	if err := placeProcess(ctx, &cfg.Kubelet); err != nil {
		return err
	}
	if n.managers.system, err = systemCgroup(&cfg.Kubelet, n.clock); err != nil {
		return err
	}
	if n.managers.cgroups, err = startCgroups(ctx, cfg, n.set, info.CgroupDriver, inputs.Machine()); err != nil {
		return err
	}
	podCIDRs := startPodCIDR(ctx, n.conn.client.Runtime, cfg.Kubelet.PodCIDR)
	if n.cluster, err = newCluster(ctx, cfg, version, inputs, n.clock, n.metrics, podCIDRs, n.simAPI()); err != nil {
		return err
	}
	if n.serve.certs, err = n.newServingCerts(ctx, ips); err != nil {
		return err
	}
	if n.vols.objects, err = objectcache.New(objectcache.Config{
		Client: n.cluster.apiClient(), Strategy: cfg.Kubelet.ConfigMapAndSecretChangeDetectionStrategy,
		Clock: n.clock, Node: n.cluster.node,
	}); err != nil {
		return fmt.Errorf("create configMap and secret source: %w", err)
	}
	creds, err := credentialProviders(ctx, cfg, n.clock, n.metrics.Registry())
	if err != nil {
		return err
	}
	if n.managers.pullRecords, err = n.newPullRecords(ctx); err != nil {
		return err
	}
	if n.managers.userns, err = n.newUserNamespaces(ctx); err != nil {
		return err
	}
	return n.assemblePods(ctx, info, ips, inputs.Machine(), creds)
}

// assemblePods builds the pod machinery: runtime manager, PLEG, syncer,
// workers, sources, admission, housekeeping and the sync loop.
func (n *node) assemblePods(ctx context.Context, info cri.Info, ips []string, host machine.Info, creds kuberuntime.CredentialProvider) error {
	cfg, clk, cl := n.cfg, n.clock, n.cluster
	// kuberuntime binds subPaths, the volume manager's TearDown unmounts them.
	subPaths := subpath.New(subpath.Config{})
	cache := pleg.NewCache()
	if err := n.newResourceManagers(ctx, cache, host); err != nil {
		return err
	}
	var err error
	if n.pods.timeline, err = timeline.New(timeline.Config{Clock: clk}); err != nil {
		return err
	}
	runtimeMgr, err := n.newRuntime(ctx, info, ips, host, creds, subPaths)
	if err != nil {
		return err
	}
	n.pods.runtime = runtimeMgr
	if n.pods.relister, err = n.newPLEG(runtimeMgr, cache); err != nil {
		return err
	}
	n.pods.statuses = podstatus.NewStore(clk)
	if n.pods.prober, n.serve.probeMetrics, err = n.newProber(); err != nil {
		return err
	}
	if n.vols.csi, err = n.newCSI(); err != nil {
		return err
	}
	if n.vols.manager, err = n.newVolumes(subPaths, host); err != nil {
		return err
	}
	if n.managers.plugins, err = n.newPluginManager(); err != nil {
		return err
	}
	// The allocation manager admits resizes through the admit handlers,
	// which need the eviction manager, built last (it evicts through the
	// workers, which sync through the syncer, which records allocations):
	// a late-bound link, as upstream's AddPodAdmitHandlers (doc.go).
	handlers := &admission.Handlers{}
	if n.pods.alloc, err = n.newAllocation(handlers.Resize, resizeNode(cfg, host)); err != nil {
		return err
	}
	// Per-pod state ends through route alone: the workers and housekeeping
	// tell it, the owners register with it (registerOwners, below).
	route := podgone.New()
	if n.serve.podAPIs, err = n.newPodAPIs(); err != nil {
		return err
	}
	syncer, err := n.newSyncer(info, ips)
	if err != nil {
		return err
	}
	if n.pods.workers, err = n.newWorkers(syncer, cache, route); err != nil {
		return err
	}
	if n.pods.sources, err = newSources(cfg, clk, cl.api); err != nil {
		return err
	}
	keeper, err := n.newHousekeeper(runtimeMgr, route)
	if err != nil {
		return err
	}
	if err := n.assembleGuards(); err != nil {
		return err
	}
	if err := n.newLoop(host, handlers, keeper); err != nil {
		return err
	}
	cl.shuttingDown = n.shuttingDown
	if n.serve.streams, err = n.newStreamingHandlers(cache); err != nil {
		return err
	}
	if err := cl.startStatusSync(n.pods.statuses, n.pods.desired, n.pods.workers, observeWritten(n.metrics, n.pods.timeline)); err != nil {
		return err
	}
	n.registerOwners(route, syncer)
	return nil
}

// newSyncer builds the pod workers' Syncer over the pod path built so far.
func (n *node) newSyncer(info cri.Info, ips []string) (*podsync.Syncer, error) {
	cl := n.cluster
	// The devices' health shows in the containers' statuses only with
	// ResourceHealthStatus (upstream's gate on UpdateAllocatedResourcesStatus).
	var health podsync.Health
	if n.cfg.ResourceHealthStatus() {
		health = podsync.Health{Devices: n.managers.devices, Claims: n.managers.dra}
	}
	// The func below reads n.pods.workers, set further down.
	syncer, err := podsync.New(podsync.Config{
		Runtime: n.pods.runtime, Statuses: watchedStatuses{observedStatuses{n.pods.statuses, n.metrics, n.pods.timeline}, n}, Clock: n.clock, PodsDir: n.podsDir(), HostIPs: ips,
		RuntimeName: info.RuntimeName, IsStatic: podutil.IsStatic,
		Desired: n.pods.desired.Has,
		Mirrors: cl.mirrors(n.pods.desired.MirrorPod,
			func(uid types.UID) bool { return n.pods.workers.IsPodTerminationRequested(uid) }),
		Volumes:        n.vols.manager,
		Prober:         n.pods.prober,
		Objects:        n.vols.objects,
		UserNamespaces: n.managers.userns,
		Claims:         n.managers.dra,
		Tracer:         tracing.Tracer(n.tracerProvider()),
		Backoff:        podplan.BackoffPolicy{Max: n.set.MaxContainerRestartPeriod},
		Recorder:       cl.recorder,
		Allocation:     n.pods.alloc,
		Reinspect:      n.pods.relister.Reinspect,
		Health:         health,
	})
	if err != nil {
		return nil, fmt.Errorf("create pod syncer: %w", err)
	}
	return syncer, nil
}

// assembleGuards builds the node's guards over the pod path: graceful
// node shutdown, the stats provider, log rotation and GC, eviction.
func (n *node) assembleGuards() (err error) {
	if n.managers.shutdown, err = n.newShutdown(); err != nil {
		return err
	}
	if n.serve.observe, err = n.newObservability(); err != nil {
		return err
	}
	if n.guards, err = n.newGuards(); err != nil {
		return err
	}
	n.managers.evictor, err = n.newEviction()
	return err
}

// newLoop completes the admit handlers (the allocation manager holds them
// already) and builds the admitter and the sync loop.
func (n *node) newLoop(host machine.Info, handlers *admission.Handlers, keeper *housekeeping.Housekeeper) error {
	kc, clk, cl := &n.cfg.Kubelet, n.clock, n.cluster
	sysctls, err := sysctl.NodeAllowlist(host.KernelVersion, kc.AllowedUnsafeSysctls)
	if err != nil {
		return fmt.Errorf("check allowed unsafe sysctls: %w", err)
	}
	*handlers = admission.Handlers{
		Node: cl.node, MaxPods: int(nodestatus.PodCapacity(kc.MaxPods, kc.PodsPerCore, host.NumCPU)),
		Pressure: n.managers.evictor.AdmitPod, Sysctls: sysctls, ShuttingDown: n.shuttingDown,
		CPUs: n.admitResources, Memory: n.admitMemory, Features: n.pods.declared.Admit,
		PluginResources: n.managers.devices.PluginResources,
	}
	admit := &admission.Admitter{
		Handlers: handlers, Active: n.isActive, Allocations: n.pods.alloc, Recorder: cl.recorder,
		Reject: func(uid types.UID, st corev1.PodStatus) { n.observePodsAPI(uid, n.pods.statuses.Set(uid, st)) },
		Stages: n.pods.timeline,
	}
	if n.pods.loop, err = syncloop.New(syncloop.Config{
		Updates: n.pods.sources.Updates(), ObserveUpdate: observeUpdate(n.metrics, clk), Events: n.pods.relister.Events(), ProbeResults: n.pods.prober.Updates(), Workers: n.pods.workers,
		ResourceUpdates: healthUpdates(n.cfg, n.managers.devices.Updates()),
		ClaimUpdates:    healthUpdates(n.cfg, n.managers.dra.Updates()),
		Admit:           admit.Admit, Resize: n.pods.alloc.Resize, Reconciled: n.pods.alloc.Reconciled, Housekeeping: keeper.Run, RuntimeErr: n.conn.health.Err, Clock: clk, Desired: n.pods.desired,
	}); err != nil {
		return fmt.Errorf("create sync loop: %w", err)
	}
	return nil
}

// newResourceManagers builds the CPU, topology and memory managers, which
// admission and container creation consult, and the DRA manager. The
// host topology they share is read from sysfs once, by the first that
// needs it.
func (n *node) newResourceManagers(ctx context.Context, cache *pleg.Cache, host machine.Info) error {
	topo := topologyReader(sync.OnceValues(func() (*machine.Topology, error) {
		return machine.ReadTopology(os.DirFS(machine.SystemDir), host)
	}))
	var err error
	if n.managers.cpus, err = n.newCPUManager(ctx, cache, topo); err != nil {
		return err
	}
	if n.managers.devices, err = n.newDeviceManager(ctx, topo); err != nil {
		return err
	}
	if n.managers.topology, err = n.newTopologyManager(n.managers.devices, n.managers.cpus, topo); err != nil {
		return err
	}
	if n.managers.memory, err = n.newMemoryManager(host, topo); err != nil {
		return err
	}
	n.managers.dra, err = n.newDRA()
	return err
}

// topologyReader returns the host's NUMA and CPU topology
// (machine.ReadTopology), the same value at every call.
type topologyReader func() (*machine.Topology, error)

// newWorkers builds the pod workers over the syncer; they tell route of
// every pod that is gone.
func (n *node) newWorkers(syncer *podsync.Syncer, cache *pleg.Cache, route *podgone.Route) (*podworker.Workers, error) {
	kc := &n.cfg.Kubelet
	w, err := podworker.New(podworker.Config{
		Syncer: syncer, Cache: cache, Clock: n.clock,
		ResyncInterval: kc.SyncFrequency.Duration, BackoffPeriod: workerBackoffPeriod,
		ObserveSync: n.metrics.ObservePodSync, ObserveStart: n.metrics.ObservePodWorkerStart,
		// A runtime call that timed out is retried within a second, not
		// after the 10 s back-off; a forbidden answer reaching the worker
		// has outlived the volume manager's own retries: not transient.
		Transient: func(err error) bool { return transient.Is(err, false) },
		Waiting:   transient.IsWaiting,
		// What a sync did reaches the status cache and the next sync at
		// once, not at the next relist (upstream's PLEGOnDemandRelist).
		Relist: n.pods.relister.RelistPod,
		// The status writer deletes a deleted API pod once it is Finished;
		// the Pods API tells its watchers (DELETED, as upstream's TerminatePod).
		OnFinished: func(uid types.UID) { n.cluster.wakeStatus(uid); n.podsAPIFinished(uid) },
		Gone:       route.Gone,
	})
	if err != nil {
		return nil, fmt.Errorf("create pod workers: %w", err)
	}
	return w, nil
}

// newRuntime builds the runtime manager that applies pod plans through the
// CRI, from the kubelet configuration.
func (n *node) newRuntime(ctx context.Context, info cri.Info, ips []string, host machine.Info, creds kuberuntime.CredentialProvider, subPaths *subpath.Binder) (*kuberuntime.Manager, error) {
	cfg, kc, clk, cl, set := n.cfg, &n.cfg.Kubelet, n.clock, n.cluster, n.set
	resources := resourceSettings(set, kc.SingleProcessOOMKill, host.CgroupV2)
	resources.Memory = memorySettings(cfg, host, int64(os.Getpagesize()))
	usernsMetrics, err := n.metrics.NewUserNamespaces()
	if err != nil {
		return nil, err
	}
	imageVolumeMetrics, err := n.metrics.NewImageVolumes()
	if err != nil {
		return nil, err
	}
	runtimeMgr, err := kuberuntime.New(kuberuntime.Config{
		Runtime: n.conn.client.Runtime, Images: n.conn.client.Image, Clock: clk, Recorder: cl.recorder,
		PodLogsDir: kc.PodLogsDir, PodsDir: n.podsDir(),
		ResolvConf: set.ResolverConfig, PodInfraImage: cfg.PodInfraContainerImage,
		SeccompProfileRoot: filepath.Join(cfg.RootDir, "seccomp"), SeccompDefault: set.SeccompDefault,
		DefaultPodSysctls: kc.DefaultPodSysctls, Machine: host, Resources: resources,
		ClusterDNS: kc.ClusterDNS, ClusterDomain: kc.ClusterDomain,
		PullSecrets: cl.pullSecrets(n.vols.objects), CredentialProviders: creds, PullRecords: pullRecordsFor(n.managers.pullRecords), Env: n.vols.objects, HostIPs: ips, SubPaths: subPaths,
		Pulls: kuberuntime.PullSettings{MaxParallel: cfg.ImagePullLimit(), QPS: set.RegistryPullQPS, Burst: set.RegistryBurst,
			Watcher: n.pullWatcher(ctx, info), Events: cl.pullEvents},
		PodStarts:      kuberuntime.PodStartLimits(runtime.NumCPU()),
		Cgroups:        n.podCgroups(),
		UserNamespaces: n.managers.userns,
		Observe: kuberuntime.Observers{
			ImageVolumesStarted: imageVolumeMetrics.Started, UserNamespacedPodStarted: usernsMetrics.PodStarted,
			PodResize: n.metrics.ObservePodResize, Stages: n.pods.timeline, PullProgress: n.metrics.ObservePullProgress,
			StartLimit: n.metrics.ObservePodStartLimit,
		},
		Assigners: kuberuntime.Assigners{CPUs: n.managers.cpus, Memory: n.managers.memory, Devices: n.managers.devices,
			Claims: n.managers.dra, RuntimeDropsCDI: !kuberuntime.AppliesCDI(info.RuntimeName, info.RuntimeVersion)},
		KubernetesVersion: config.KubernetesVersion,
	})
	if err != nil {
		return nil, fmt.Errorf("create runtime manager: %w", err)
	}
	return runtimeMgr, nil
}

// newPLEG builds the PLEG over the runtime manager, following the
// runtime's container event stream unless EventedPLEG=false
// (config.ContainerEvents).
func (n *node) newPLEG(runtimeMgr *kuberuntime.Manager, cache *pleg.Cache) (*pleg.PLEG, error) {
	var events pleg.EventSource
	if n.cfg.ContainerEvents() {
		events = runtimeMgr
	}
	p, err := pleg.New(pleg.Config{Runtime: runtimeMgr, Cache: cache, Clock: n.clock, Period: n.cfg.PLEGRelistPeriod, Threshold: plegThreshold,
		Events: events, Observe: observeRelist(n.metrics)})
	if err != nil {
		return nil, fmt.Errorf("create PLEG: %w", err)
	}
	return p, nil
}

// newHousekeeper builds the housekeeper that removes what pods no longer
// need (pod and log directories, volumes and pod cgroups) and tells route
// of the orphans.
func (n *node) newHousekeeper(runtimeMgr *kuberuntime.Manager, route *podgone.Route) (*housekeeping.Housekeeper, error) {
	kc := &n.cfg.Kubelet
	keeperCfg := housekeeping.Config{
		Workers: n.pods.workers, Gone: route, Runtime: runtimeMgr, SourcesReady: n.pods.sources.Ready, PodsDir: n.podsDir(),
		PodLogsDir: kc.PodLogsDir, TearDown: n.vols.manager.TearDown, Desired: n.pods.desired,
	}
	if n.managers.cgroups != nil { // a nil *cm.Manager must not become a non-nil interface
		keeperCfg.Cgroups = n.managers.cgroups
	}
	keeper, err := housekeeping.New(keeperCfg)
	if err != nil {
		return nil, fmt.Errorf("create housekeeper: %w", err)
	}
	return keeper, nil
}

// run starts every component and waits until ctx ends or one fails.
func (n *node) run(ctx context.Context) error {
	kc := &n.cfg.Kubelet
	healthCheck := func() error {
		if ok, err := n.pods.relister.Healthy(); !ok {
			return fmt.Errorf("PLEG is not healthy: %w", err)
		}
		if since := n.clock.Since(n.pods.loop.LastIteration()); since > 2*time.Minute {
			return fmt.Errorf("sync loop has not run for %s", since.Round(time.Second))
		}
		return nil
	}
	listPods := func() []corev1.Pod { return podsWithStatus(n.pods.desired.Pods(), n.pods.statuses) }

	g := n.newGroup(ctx)
	if n.managers.system != nil {
		g.Go("system-cgroups", n.managers.system.Run)
	}
	g.Go("runtime-health", n.conn.health.Run)
	g.Go("pleg", n.pods.relister.Run)
	g.Go("prober", n.pods.prober.Run)
	g.Go("volumes", n.vols.manager.Run)
	if n.vols.mounter != nil {
		g.Go("csi-drivers", n.vols.mounter.Run) // the CSIDriver informer, as upstream's volume manager starts it
	}
	g.Go("objects", n.vols.objects.Run)
	for name, run := range n.cluster.runs() {
		g.Go(name, run)
	}
	for name, run := range n.serve.certs.runs {
		g.Go(name, run)
	}
	g.Go("pod-sources", n.pods.sources.Run)
	g.Go("stats", n.serve.observe.stats.Run)
	g.Go("log-rotation", n.guards.logs.Run)
	g.Go("container-gc", n.guards.containers.Run)
	g.Go("image-gc", n.guards.images.Run)
	g.Go("eviction", n.managers.evictor.Run)
	g.Go("cpu-manager", n.managers.cpus.Run)
	g.Go("device-manager", n.managers.devices.Run)
	g.Go("dra-manager", n.managers.dra.Run)
	g.Go("plugin-manager", n.managers.plugins.Run)
	if n.vols.csi != nil {
		g.Go("csinode", n.initCSINode)
	} else {
		n.cluster.releaseStatus()
	}
	g.Go("sync-loop", n.pods.loop.Run)
	g.Go("pod-resizes", func(ctx context.Context) error { n.pods.alloc.Run(ctx); return nil })
	if n.managers.shutdown != nil {
		g.Go("node-shutdown", n.managers.shutdown.Run)
	}
	if n.set.MakeIPTablesUtilChains {
		g.Go("iptables", n.runIPTables)
	}
	for name, run := range n.serve.podAPIs.runs() {
		g.Go(name, run)
	}
	if kc.HealthzPort != nil && *kc.HealthzPort > 0 {
		g.Go("healthz", func(ctx context.Context) error {
			return server.Serve(ctx, "healthz", kc.HealthzBindAddress, int(*kc.HealthzPort), server.HealthzHandler(healthCheck))
		})
	}
	if kc.ReadOnlyPort > 0 {
		g.Go("read-only", func(ctx context.Context) error {
			return server.Serve(ctx, "read-only", kc.Address, int(kc.ReadOnlyPort), server.ReadOnlyHandler(healthCheck, listPods, n.apiHandlers()))
		})
	}
	if n.set.EnableServer {
		g.Go("kubelet-api", func(ctx context.Context) error { return n.serveAPI(ctx, healthCheck, listPods) })
	}
	// Last, so it is the first to stop: no watchdog ping once berth stops.
	g.Go("systemd", n.notifySystemd(healthCheck))
	err := g.Wait()
	n.waitWorkers(ctx)
	klog.FromContext(ctx).Info("berth stopped", "err", err)
	return err
}

// waitWorkers waits for the pod worker goroutines to return (their
// context ended with the sync loop's; a call in flight returns with it),
// within stopBudget. They never stop a pod on the way out.
func (n *node) waitWorkers(ctx context.Context) {
	done := make(chan struct{})
	go func() { n.pods.workers.Wait(); close(done) }()
	select {
	case <-done:
	case <-n.clock.After(stopBudget):
		klog.FromContext(ctx).Error(nil, "Pod workers did not stop in time; leaving them behind", "budget", stopBudget)
	}
}

// close releases what assemble acquired.
func (n *node) close() {
	if n.cluster != nil {
		n.cluster.recorder.Shutdown()
	}
	n.conn.client.Close()
	n.shutdownTracing(context.Background())
}

// podCgroups is the container manager for kuberuntime; nil without
// cgroupsPerQOS. EnsurePod counts the pods the sync loop wants.
func (n *node) podCgroups() kuberuntime.PodCgroups {
	if n.managers.cgroups == nil {
		return nil
	}
	return podCgroups{m: n.managers.cgroups, active: n.pods.desired.Pods}
}

func (n *node) podsDir() string { return filepath.Join(n.cfg.RootDir, "pods") }

// isActive reports whether an admitted pod still counts against the node
// (podworker.Workers.IsActive).
func (n *node) isActive(uid types.UID) bool { return n.pods.workers.IsActive(uid, n.pods.statuses.Get) }

// activePods are the pods the sync loop wants that still count against
// the node (podworker.Workers.ActivePods): admission's, the resource
// managers', resizes' and node shutdown's view.
func (n *node) activePods() []*corev1.Pod {
	return n.pods.workers.ActivePods(n.pods.desired.Pods(), n.pods.statuses.Get)
}

// connectRuntime dials the CRI endpoints (a simulated node's client is
// connected already) and checks the runtime answers.
func (n *node) connectRuntime(ctx context.Context, observe cri.ObserveFunc) (*cri.Client, cri.Info, error) {
	if n.sim != nil {
		info, err := n.sim.Runtime.Verify(ctx)
		if err != nil {
			return nil, cri.Info{}, fmt.Errorf("verify simulated runtime: %w", err)
		}
		return n.sim.Runtime, info, nil
	}
	cfg, tp := n.cfg, n.conn.tracer
	kc := &cfg.Kubelet
	o := cri.Options{
		RuntimeEndpoint: kc.ContainerRuntimeEndpoint,
		ImageEndpoint:   kc.ImageServiceEndpoint,
		Timeout:         kc.RuntimeRequestTimeout.Duration,
		Observe:         observe,
	}
	if tp != nil { // a nil provider must not become a non-nil interface
		o.TracerProvider = tp
	}
	client, err := cri.Dial(ctx, o)
	if err != nil {
		return nil, cri.Info{}, fmt.Errorf("connect to container runtime %q: %w", kc.ContainerRuntimeEndpoint, err)
	}
	info, err := client.Verify(ctx)
	if err != nil {
		client.Close()
		return nil, cri.Info{}, fmt.Errorf("verify container runtime %q: %w", kc.ContainerRuntimeEndpoint, err)
	}
	return client, info, nil
}

// podsWithStatus returns copies of pods carrying their latest status.
func podsWithStatus(pods []*corev1.Pod, statuses *podstatus.Store) []corev1.Pod {
	out := make([]corev1.Pod, 0, len(pods))
	for _, p := range pods {
		c := *p.DeepCopy()
		if st, ok := statuses.Get(p.UID); ok {
			c.Status = st
		}
		out = append(out, c)
	}
	return out
}
