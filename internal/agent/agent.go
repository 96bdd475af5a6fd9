package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/config"
	"github.com/berthk8s/berth/internal/cri"
	"github.com/berthk8s/berth/internal/kuberuntime"
	"github.com/berthk8s/berth/internal/pleg"
	"github.com/berthk8s/berth/internal/podsource"
	"github.com/berthk8s/berth/internal/podstatus"
	"github.com/berthk8s/berth/internal/podsync"
	"github.com/berthk8s/berth/internal/podworker"
	"github.com/berthk8s/berth/internal/server"
	"github.com/berthk8s/berth/internal/syncloop"
)

// Fixed periods, as upstream.
const (
	plegPeriod          = time.Second
	plegThreshold       = 3 * time.Minute
	runtimeCheckPeriod  = 5 * time.Second
	workerBackoffPeriod = 10 * time.Second
)

// Run builds berth from cfg and runs it until ctx ends. version is berth's
// own version (for the API user agent). Start order: runtime connection,
// runtime manager, PLEG, pod workers, (in cluster mode) API clients, node
// status, lease and status writer, sources, sync loop, servers. Everything
// stops together when ctx ends or a component fails; stopping berth never
// stops a pod.
func Run(ctx context.Context, cfg *config.Config, version string) error {
	logger := klog.FromContext(ctx).WithValues("node", cfg.NodeName)
	ctx = klog.NewContext(ctx, logger)
	kc := &cfg.Kubelet
	clk := clock.RealClock{}

	client, info, err := connectRuntime(ctx, cfg)
	if err != nil {
		return err
	}
	defer client.Close()
	logger.Info("Connected to container runtime", "runtime", info.RuntimeName, "version", info.RuntimeVersion,
		"apiVersion", info.RuntimeAPIVersion, "cgroupDriver", cgroupDriver(ctx, kc.CgroupDriver, info.CgroupDriver))

	podsDir := filepath.Join(cfg.RootDir, "pods")
	podLogsDir := kc.PodLogsDir
	for _, dir := range []string{cfg.RootDir, podsDir, podLogsDir} {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return fmt.Errorf("create directory %q: %w", dir, err)
		}
	}
	ips, err := hostIPs(cfg.NodeIPs)
	if err != nil {
		return err
	}
	health := newRuntimeHealth(client, clk, runtimeCheckPeriod)
	var cl *cluster // node status is kicked when the runtime's health changes
	health.onChange = func() { cl.kickNode() }
	health.check(ctx) // a first verdict before anything asks for one
	inputs, err := newNodeInputs(cfg, info, ips, health, client.Image, clk)
	if err != nil {
		return fmt.Errorf("read machine information: %w", err)
	}
	cl, err = newCluster(ctx, cfg, version, inputs, clk)
	if err != nil {
		return err
	}
	recorder := cl.recorder
	defer recorder.Shutdown()

	runtimeMgr, err := kuberuntime.New(kuberuntime.Config{
		Runtime:       client.Runtime,
		Images:        client.Image,
		Clock:         clk,
		Recorder:      recorder,
		PodLogsDir:    podLogsDir,
		PodsDir:       podsDir,
		ResolvConf:    ptr.Deref(kc.ResolverConfig, ""),
		PodInfraImage: cfg.PodInfraContainerImage,
	})
	if err != nil {
		return fmt.Errorf("create runtime manager: %w", err)
	}
	cache := pleg.NewCache()
	relister, err := pleg.New(pleg.Config{Runtime: runtimeMgr, Cache: cache, Clock: clk, Period: plegPeriod, Threshold: plegThreshold})
	if err != nil {
		return fmt.Errorf("create PLEG: %w", err)
	}
	statuses := podstatus.NewStore()

	var loop *syncloop.Loop        // the funcs below read its snapshots
	var workers *podworker.Workers // likewise
	desired := func(uid types.UID) bool { _, ok := loop.Pod(uid); return ok }
	syncer, err := podsync.New(podsync.Config{
		Runtime: runtimeMgr, Statuses: statuses, Clock: clk, PodsDir: podsDir, HostIPs: ips,
		RuntimeName: info.RuntimeName, Desired: desired, IsStatic: podsource.IsStaticPod,
		Mirrors: cl.mirrors(func(fullName string) (*corev1.Pod, bool) { return loop.MirrorPod(fullName) },
			func(uid types.UID) bool { return workers.IsPodTerminationRequested(uid) }),
		Terminated: func(types.UID) { cl.wakeStatus() },
	})
	if err != nil {
		return fmt.Errorf("create pod syncer: %w", err)
	}
	workers, err = podworker.New(podworker.Config{
		Syncer: syncer, Cache: cache, Clock: clk,
		ResyncInterval: kc.SyncFrequency.Duration, BackoffPeriod: workerBackoffPeriod,
	})
	if err != nil {
		return fmt.Errorf("create pod workers: %w", err)
	}
	sources, err := newSources(cfg, clk, cl.api)
	if err != nil {
		return err
	}
	keeper := newHousekeeper(housekeeperConfig{
		Workers: workers, Runtime: runtimeMgr, SourcesReady: sources.Ready, PodsDir: podsDir, PodLogsDir: podLogsDir,
		Statuses: statuses, Forget: runtimeMgr.ForgetPod,
	})
	admit := &admitter{
		node: cl.node, maxPods: int(kc.MaxPods), recorder: recorder,
		active: func(uid types.UID) bool { return isActive(statuses, workers, uid) },
		reject: func(uid types.UID, st corev1.PodStatus) { statuses.Set(uid, st) },
	}
	loop, err = syncloop.New(syncloop.Config{
		Updates: sources.Updates(), Events: relister.Events(), Workers: workers,
		Admit: admit.Admit, Housekeeping: keeper.Run, RuntimeErr: health.Err, Clock: clk,
	})
	if err != nil {
		return fmt.Errorf("create sync loop: %w", err)
	}
	if err := cl.startStatusSync(statuses, loop, workers); err != nil {
		return err
	}

	healthCheck := func() error {
		if ok, err := relister.Healthy(); !ok {
			return fmt.Errorf("PLEG is not healthy: %w", err)
		}
		if since := clk.Since(loop.LastIteration()); since > 2*time.Minute {
			return fmt.Errorf("sync loop has not run for %s", since.Round(time.Second))
		}
		return nil
	}
	listPods := func() []corev1.Pod { return podsWithStatus(loop.Pods(), statuses) }

	g := newGroup(ctx)
	g.Go("runtime-health", health.Run)
	g.Go("pleg", relister.Run)
	for name, run := range cl.runs() {
		g.Go(name, run)
	}
	g.Go("pod-sources", sources.Run)
	g.Go("sync-loop", loop.Run)
	if kc.HealthzPort != nil && *kc.HealthzPort > 0 {
		g.Go("healthz", func(ctx context.Context) error {
			return server.Serve(ctx, "healthz", kc.HealthzBindAddress, int(*kc.HealthzPort), server.HealthzHandler(healthCheck))
		})
	}
	if kc.ReadOnlyPort > 0 {
		g.Go("read-only", func(ctx context.Context) error {
			return server.Serve(ctx, "read-only", kc.Address, int(kc.ReadOnlyPort), server.ReadOnlyHandler(healthCheck, listPods))
		})
	}
	err = g.Wait()
	workers.Wait()
	logger.Info("berth stopped", "err", err)
	return err
}

// isActive reports whether an admitted pod still counts against the node:
// its worker has not terminated it and its phase is not terminal.
func isActive(statuses *podstatus.Store, workers *podworker.Workers, uid types.UID) bool {
	if workers.IsPodKnownTerminated(uid) {
		return false
	}
	st, ok := statuses.Get(uid)
	return !ok || (st.Phase != corev1.PodSucceeded && st.Phase != corev1.PodFailed)
}

// connectRuntime dials the CRI endpoints and checks the runtime answers.
func connectRuntime(ctx context.Context, cfg *config.Config) (*cri.Client, cri.Info, error) {
	kc := &cfg.Kubelet
	client, err := cri.Dial(ctx, cri.Options{
		RuntimeEndpoint: kc.ContainerRuntimeEndpoint,
		ImageEndpoint:   kc.ImageServiceEndpoint,
		Timeout:         kc.RuntimeRequestTimeout.Duration,
	})
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

// cgroupDriver picks the runtime's cgroup driver when it reports one, as
// upstream does, and says so when it differs from the configured one.
func cgroupDriver(ctx context.Context, configured, fromRuntime string) string {
	if fromRuntime == "" || fromRuntime == configured {
		return configured
	}
	klog.FromContext(ctx).Info("Using the container runtime's cgroup driver", "configured", configured, "runtime", fromRuntime)
	return fromRuntime
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
