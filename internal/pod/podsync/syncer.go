package podsync

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/platform/cri"
	"github.com/berthk8s/berth/internal/pod/kuberuntime"
	"github.com/berthk8s/berth/internal/pod/podplan"
	"github.com/berthk8s/berth/internal/pod/podstatus"
	"github.com/berthk8s/berth/internal/pod/podworker"
	"github.com/berthk8s/berth/internal/pod/prober"
	"github.com/berthk8s/berth/internal/podkit/podutil"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
	"github.com/berthk8s/berth/internal/volumes/volume"
)

// Runtime is what the syncer needs of the runtime manager.
type Runtime interface {
	Apply(ctx context.Context, pod *corev1.Pod, rt *runtimestate.Pod, plan podplan.Actions, opts kuberuntime.ApplyOptions) (kuberuntime.Result, error)
	KillPod(ctx context.Context, pod *corev1.Pod, rt *runtimestate.Pod, gracePeriod *int64) error
	RemovePod(ctx context.Context, rt *runtimestate.Pod) error
	PodStatus(ctx context.Context, uid types.UID, name, namespace string) (*runtimestate.Pod, error)
}

// StatusStore keeps the latest generated status per pod. A pod's status
// ends with the pod, through the route by which per-pod state ends
// (internal/pod/podgone), not here.
type StatusStore interface {
	Set(uid types.UID, status corev1.PodStatus) corev1.PodStatus
	Get(uid types.UID) (corev1.PodStatus, bool)
}

// Volumes sets up and tears down pods' volumes.
type Volumes interface {
	// SetUp mounts every volume of the pod (idempotent) and returns each
	// volume's host directory by name.
	SetUp(ctx context.Context, pod *corev1.Pod) (map[string]string, error)
	// SupplementalGroups are the groups the pod's set-up volumes add to
	// its containers' (upstream's GetExtraSupplementalGroupsForPod).
	SupplementalGroups(pod *corev1.Pod) []int64
	// RelabeledVolumes names the set-up volumes (dirs, as SetUp returned
	// them) whose mounts the runtime relabels for SELinux.
	RelabeledVolumes(ctx context.Context, pod *corev1.Pod, dirs map[string]string) map[string]bool
	// TearDown releases the volumes of a terminated pod.
	TearDown(ctx context.Context, uid types.UID) error
	// Update tells that the pod object changed (downward API content).
	Update(pod *corev1.Pod)
}

// Objects is told which pods may read configMaps and secrets
// (internal/volumes/objectcache): the Watch and Cache strategies serve only the
// objects of registered pods.
type Objects interface {
	// RegisterPod records (or updates) the objects the pod references.
	RegisterPod(pod *corev1.Pod)
	// UnregisterPod drops them once the pod terminated.
	UnregisterPod(pod *corev1.Pod)
}

// UserNamespaces frees a terminated pod's user namespace IDs
// (internal/node/userns).
type UserNamespaces interface {
	Release(ctx context.Context, uid types.UID)
}

// Claims prepares and unprepares pods' ResourceClaims with their DRA
// drivers (internal/node/dra).
type Claims interface {
	// Prepare prepares the pod's claims (idempotent); an error says why
	// the pod must wait: a claim not generated, allocated or reserved for
	// it yet, a driver missing or failing.
	Prepare(ctx context.Context, pod *corev1.Pod) error
	// Unprepare ends the pod's use of its claims once none of its
	// containers runs; nothing to do for a pod that holds none.
	Unprepare(ctx context.Context, uid types.UID) error
}

// Mirrors keeps the mirror pods of static pods in the API server.
type Mirrors interface {
	// Sync creates or replaces the static pod's mirror pod as needed.
	Sync(ctx context.Context, static *corev1.Pod) error
	// Delete removes the mirror pod of a static pod that is gone.
	Delete(ctx context.Context, static *corev1.Pod) error
}

// Prober runs the pods' probes (internal/pod/prober).
type Prober interface {
	// AddPod starts (or keeps) probing a pod that runs.
	AddPod(pod *corev1.Pod)
	// StopLivenessAndStartup ends the probes that would restart the
	// containers of a terminating pod.
	StopLivenessAndStartup(uid types.UID)
	// RemovePod ends every probe of a terminated pod.
	RemovePod(uid types.UID)
	// Snapshot returns the pod's probe results for the planner and status.
	Snapshot(pod *corev1.Pod, rt *runtimestate.Pod) prober.Snapshot
}

// Config holds the syncer's collaborators.
type Config struct {
	Runtime  Runtime
	Statuses StatusStore
	Clock    clock.PassiveClock
	// PodsDir is <root-dir>/pods; each pod gets PodsDir/<uid>.
	PodsDir string
	HostIPs []string
	// RuntimeName prefixes container IDs in status ("containerd").
	RuntimeName string
	// Desired reports whether a source still wants the pod; a terminated pod
	// that is no longer desired has its containers and directories removed.
	Desired func(uid types.UID) bool
	// IsStatic reports whether a pod came from a file or URL source.
	IsStatic func(pod *corev1.Pod) bool
	// Mirrors is nil in standalone mode.
	Mirrors Mirrors
	// Volumes may be nil: then a pod's volumeMounts fail its containers
	// with CreateContainerConfigError (never silently skipped).
	Volumes Volumes
	// Prober may be nil: then no probe runs and containers are ready and
	// started as soon as they run.
	Prober Prober
	// Objects may be nil (no configMap or secret is read then).
	Objects Objects
	// UserNamespaces may be nil (no pod has a user namespace then).
	UserNamespaces UserNamespaces
	// Claims may be nil: then a pod with resourceClaims waits (its
	// sandbox is never created).
	Claims Claims
	// Tracer traces the syncs (kubelet tracing); nil traces nothing.
	Tracer trace.Tracer
	// Backoff is the CrashLoopBackOff policy; the zero value means
	// upstream's.
	Backoff podplan.BackoffPolicy
	// Recorder records the events of berth's own decisions about a pod
	// (DeadlineExceeded); nil records none. The resize events are the
	// allocation manager's (allocation.Manager.Record).
	Recorder Recorder
	// Allocation holds the pods' allocations and actuations (in-place
	// resize); nil runs every pod with its spec and resizes nothing.
	Allocation Allocation
	// Reinspect has the pod's runtime status read again at its next
	// relist (pleg.PLEG.Reinspect): after an in-place resize, which the
	// runtime's listing does not show. Nil: the periodic relist's.
	Reinspect func(uid types.UID)
	// Health gives the health of the containers' devices for their
	// allocatedResourcesStatus; the zero value gives none.
	Health Health
}

// Health is where the containers' device health comes from.
type Health struct {
	// Devices gives the health of a container's devices (the device
	// manager's ResourceHealth); nil: none.
	Devices DeviceHealth
	// Claims gives the health of the devices of a container's claims
	// (the DRA manager's ClaimHealth); nil: none.
	Claims ClaimHealth
}

// DeviceHealth is the device manager as the status generator's input.
type DeviceHealth interface {
	ResourceHealth(podUID, container string) []corev1.ResourceStatus
}

// ClaimHealth is the DRA manager as the status generator's input.
type ClaimHealth interface {
	ClaimHealth(pod *corev1.Pod, c *corev1.Container) []corev1.ResourceStatus
}

// Recorder records events about pods.
type Recorder interface {
	Eventf(pod *corev1.Pod, eventType, reason, messageFmt string, args ...any)
}

// Syncer implements podworker.Syncer. It is safe for concurrent use; the
// pod workers call it at most once at a time per UID, so a pod's record is
// only ever used by one call at a time.
type Syncer struct {
	cfg Config
	// mu guards records (the map, not the records in it).
	mu      sync.Mutex
	records map[types.UID]*record
}

// record is what berth remembers about a pod between its syncs. It is
// written only by the pod's own sync (one at a time per UID) and dropped
// by the last one, SyncTerminatedPod (or by Forget, the pod gone).
type record struct {
	// crash is the CrashLoopBackOff state: podplan.Compute's input, and
	// replaced by the plan's Backoff.
	crash map[string]podplan.BackoffEntry
	// pulls is the image pull back-off, kuberuntime.Apply's input and
	// output.
	pulls kuberuntime.PullBackoffs
	// failures are the waiting reasons of the last apply; the status shows
	// them until the next apply says otherwise.
	failures map[string]runtimestate.StartFailure
	// termination is why berth itself ends the pod (podworker.Kill's
	// reason), nil otherwise; every status generated after it says so.
	termination *podstatus.Termination
	// wait is what stopped the last sync before the pod's sandbox was
	// ready (a volume, the claims, the sandbox or its network), nil when
	// nothing did (wait.go); every status shows it until a sync gets
	// past that step.
	wait *podstatus.PodWait
	// firstSeen is the time of the pod's first sync: of the new pods
	// waiting to start, the runtime starts the one seen first first
	// (kuberuntime.ApplyOptions.FirstSeen).
	firstSeen time.Time
}

var _ podworker.Syncer = (*Syncer)(nil)

// New validates cfg and returns a Syncer.
func New(cfg Config) (*Syncer, error) {
	if cfg.Runtime == nil || cfg.Statuses == nil || cfg.Clock == nil || cfg.PodsDir == "" || cfg.Desired == nil {
		return nil, errors.New("podsync: Runtime, Statuses, Clock, PodsDir and Desired are required")
	}
	if cfg.Mirrors != nil && cfg.IsStatic == nil {
		return nil, errors.New("podsync: IsStatic is required with Mirrors")
	}
	if cfg.RuntimeName == "" {
		cfg.RuntimeName = "containerd"
	}
	if cfg.Tracer == nil {
		cfg.Tracer = noop.NewTracerProvider().Tracer("")
	}
	return &Syncer{cfg: cfg, records: map[types.UID]*record{}}, nil
}

// syncPod takes the pod's snapshot once (snapshot.go: the pod with its
// allocation, its runtime state rt, the probe results, the previous
// status, the actuation and now), computes its plan once with
// podplan.Compute, generates its status from the same snapshot and plan
// and, unless that status's phase is terminal, has the runtime apply the
// same plan:
//
//	snapshot + record's CrashLoopBackOff -> podplan.Compute -> plan
//	plan's resize progress               -> allocation Record
//	snapshot + plan + last start failures -> podstatus.Generate (its phase: done?)
//	plan + volumes                       -> kuberuntime.Apply
//	what the apply set, start failures   -> allocation Record, record,
//	                                        status again from the snapshot
//
// After a RestartAllContainers reset it asks for another sync at once
// (podworker.SyncAgain): the next plan starts the pod over, as upstream
// requeues the pod.
func (s *Syncer) syncPod(ctx context.Context, t podworker.UpdateType, pod *corev1.Pod, rt *runtimestate.Pod) (podworker.SyncResult, error) {
	if s.cfg.Prober != nil {
		// Before the status: a container of a known pod is not ready until
		// its readiness probe says so.
		s.cfg.Prober.AddPod(pod)
	}
	rec := s.record(pod.UID)
	snap := s.snapshot(pod, rt)
	if rec.firstSeen.IsZero() {
		rec.firstSeen = snap.now
	}
	first := s.firstActuation(&snap)
	plan := podplan.Compute(s.planInputs(&snap, rec.crash))
	if plan.Deadline.Exceeded {
		s.deadlineExceeded(snap.pod)
	}
	s.resizeProgress(ctx, &snap, first, plan)
	status := s.generate(ctx, &snap, waiting(plan, rec.failures), plan.RestartAll, false)
	s.syncMirror(ctx, snap.pod)
	if podutil.IsTerminal(status.Phase) {
		return podworker.SyncResult{Outcome: podworker.SyncTerminal}, nil
	}
	outcome, err := s.apply(ctx, t, &snap, rec, plan)
	return podworker.SyncResult{Outcome: outcome, WakeAt: plan.Deadline.At}, err
}

// apply has the runtime apply the plan of a pod that is not finished,
// after its directory and volumes are ready.
func (s *Syncer) apply(ctx context.Context, t podworker.UpdateType, snap *snapshot, rec *record, plan podplan.Actions) (podworker.SyncOutcome, error) {
	pod := snap.pod
	if s.cfg.Objects != nil {
		// Before volumes, env and pull secrets read them, on every sync so
		// a changed spec's references are followed (upstream's SyncPod).
		s.cfg.Objects.RegisterPod(pod)
	}
	if err := os.MkdirAll(s.PodDir(pod.UID), 0o750); err != nil {
		return podworker.SyncSteady, fmt.Errorf("create pod directory: %w", err)
	}
	var (
		volumes     map[string]string
		relabel     map[string]bool
		extraGroups []int64
	)
	if s.cfg.Volumes != nil && len(pod.Spec.Volumes) > 0 {
		if t == podworker.SyncPodUpdate {
			s.cfg.Volumes.Update(pod)
		}
		v, err := s.cfg.Volumes.SetUp(ctx, pod)
		if err != nil {
			w := volumeWait(err)
			s.stoppedAt(ctx, snap, rec, plan, &w)
			return podworker.SyncSteady, fmt.Errorf("set up volumes of pod %q: %w", klog.KObj(pod), err)
		}
		volumes, extraGroups = v, s.cfg.Volumes.SupplementalGroups(pod)
		relabel = s.cfg.Volumes.RelabeledVolumes(ctx, pod, v)
	}
	if err := s.prepareClaims(ctx, pod, plan); err != nil {
		w := claimsWait(err)
		s.stoppedAt(ctx, snap, rec, plan, &w)
		return podworker.SyncSteady, fmt.Errorf("pod %q: %w", klog.KObj(pod), err)
	}
	rec.crash = plan.Backoff
	opts := kuberuntime.ApplyOptions{Volumes: volumes, Relabel: relabel, ExtraGroups: extraGroups, Pulls: rec.pulls, FirstSeen: rec.firstSeen}
	if plan.Resize.PodCgroup || len(plan.Resize.Containers) > 0 {
		opts.Actuated = actuatedPod(snap)
	}
	res, err := s.cfg.Runtime.Apply(ctx, pod, snap.rt, plan, opts)
	rec.pulls = res.Pulls
	resized := s.recordActuation(ctx, snap, plan, res)
	if !maps.Equal(rec.failures, res.Failures) || res.ResizeErr != nil {
		rec.failures = res.Failures
		s.generate(ctx, snap, waiting(plan, rec.failures), plan.RestartAll, false)
	}
	s.stoppedAt(ctx, snap, rec, plan, res.Sandbox)
	if err != nil {
		return podworker.SyncSteady, fmt.Errorf("sync pod %q: %w", klog.KObj(pod), err)
	}
	if plan.RestartAll == podplan.RestartAllResetting || resized {
		return podworker.SyncAgain, nil
	}
	if all := waiting(plan, res.Failures); len(all) > 0 {
		// Retry after the worker's backoff: a container waits on an image
		// pull or a crash-loop back-off that will expire.
		return podworker.SyncSteady, fmt.Errorf("sync pod %q: %w", klog.KObj(pod), failuresError(all))
	}
	return podworker.SyncSteady, nil
}

// waiting is why the plan's containers are not running: the plan's own
// waiting reasons (CrashLoopBackOff), and the start failures of the last
// apply for the others.
func waiting(plan podplan.Actions, failures map[string]runtimestate.StartFailure) map[string]runtimestate.StartFailure {
	if len(plan.Waiting) == 0 {
		return failures
	}
	out := maps.Clone(failures)
	if out == nil {
		out = make(map[string]runtimestate.StartFailure, len(plan.Waiting))
	}
	for name, w := range plan.Waiting {
		out[name] = runtimestate.StartFailure{Reason: w.Reason, Message: w.Message}
	}
	return out
}

// syncTerminatingPod stops every container and sandbox of the pod, then
// records its final status from what the runtime says after the kill: the
// pod is terminal (upstream's podIsTerminal), so its phase becomes
// Succeeded or Failed. A kill with a reason (berth ending the pod itself:
// a node shutdown) makes that status, and every later one, report it.
func (s *Syncer) syncTerminatingPod(ctx context.Context, pod *corev1.Pod, rt *runtimestate.Pod, kill podworker.Kill) error {
	if s.cfg.Prober != nil {
		s.cfg.Prober.StopLivenessAndStartup(pod.UID)
	}
	if kill.Reason != "" {
		// As upstream, the status says so before the kill: the phase is
		// decided over the pod as it runs (Failed unless it Succeeded).
		s.setTermination(pod.UID, &podstatus.Termination{Reason: kill.Reason, Message: kill.Message, NoDisruptionTarget: kill.NoDisruptionTarget})
		snap := s.snapshot(pod, rt)
		s.generate(ctx, &snap, s.failures(pod.UID), podplan.RestartAllNone, false)
	}
	gracePeriod := kill.GracePeriod
	if err := s.cfg.Runtime.KillPod(ctx, pod, rt, &gracePeriod); err != nil {
		return fmt.Errorf("kill pod %q: %w", klog.KObj(pod), err)
	}
	after, err := s.cfg.Runtime.PodStatus(ctx, pod.UID, pod.Name, pod.Namespace)
	if err != nil {
		return fmt.Errorf("read status of killed pod %q: %w", klog.KObj(pod), err)
	}
	if s.cfg.Claims != nil {
		// After every container stopped and before the final status, so
		// the claims are free before the API sees the pod end (upstream's
		// order).
		if err := s.cfg.Claims.Unprepare(ctx, pod.UID); err != nil {
			return fmt.Errorf("pod %q: %w", klog.KObj(pod), err)
		}
	}
	// A new observation: the runtime after the kill, at its time.
	snap := s.snapshot(pod, after)
	s.generate(ctx, &snap, s.failures(pod.UID), podplan.RestartAllNone, true)
	return nil
}

// SyncTerminatingRuntimePod kills and removes a pod no source knows.
func (s *Syncer) SyncTerminatingRuntimePod(ctx context.Context, rt *runtimestate.Pod) error {
	if err := s.cfg.Runtime.KillPod(ctx, nil, rt, nil); err != nil {
		return fmt.Errorf("kill orphaned pod %q: %w", rt.UID, err)
	}
	if err := s.cfg.Runtime.RemovePod(ctx, rt); err != nil {
		return fmt.Errorf("remove orphaned pod %q: %w", rt.UID, err)
	}
	return nil
}

// syncTerminatedPod records the pod's final status and, when no source
// wants the pod any more, removes its containers, sandboxes and directories
// and reports it gone (its worker then tells the route by which per-pod
// state ends). A finished pod that is still desired keeps its containers
// for their logs. Either way the pod's record is dropped: this is the
// last call of the pod's worker, and a pod created again with the same
// UID starts afresh.
func (s *Syncer) syncTerminatedPod(ctx context.Context, pod *corev1.Pod, rt *runtimestate.Pod) (gone bool, err error) {
	if s.cfg.Prober != nil {
		s.cfg.Prober.RemovePod(pod.UID)
	}
	if s.cfg.Volumes != nil {
		if err := s.cfg.Volumes.TearDown(ctx, pod.UID); err != nil {
			return false, fmt.Errorf("tear down volumes of pod %q: %w", klog.KObj(pod), err)
		}
	}
	if s.cfg.Objects != nil {
		// Its volumes are gone and no container of it will start again.
		s.cfg.Objects.UnregisterPod(pod)
	}
	if s.cfg.UserNamespaces != nil {
		// No container of it runs or will start again: its IDs are free
		// (upstream releases them at the end of syncTerminatedPod).
		s.cfg.UserNamespaces.Release(ctx, pod.UID)
	}
	if s.cfg.Desired(pod.UID) {
		snap := s.snapshot(pod, rt)
		status := s.generate(ctx, &snap, s.failures(pod.UID), podplan.RestartAllNone, true)
		// Every container is stopped: none may stay "waiting" and the pod
		// must end in a terminal phase, or a deleted pod whose containers
		// never started would never be removed from the API.
		s.cfg.Statuses.Set(pod.UID, podstatus.Terminated(&pod.Spec, status, s.cfg.IsStatic != nil && s.cfg.IsStatic(pod)))
		s.dropRecord(pod.UID)
		return false, nil
	}
	if err := s.cfg.Runtime.RemovePod(ctx, rt); err != nil {
		return false, fmt.Errorf("remove pod %q: %w", klog.KObj(pod), err)
	}
	if s.cfg.Mirrors != nil && s.cfg.IsStatic(pod) {
		if err := s.cfg.Mirrors.Delete(ctx, pod); err != nil {
			return false, fmt.Errorf("delete mirror pod of %q: %w", klog.KObj(pod), err)
		}
	}
	if err := volume.RemoveOneFilesystem(s.PodDir(pod.UID)); err != nil {
		return false, fmt.Errorf("remove pod directory: %w", err)
	}
	s.dropRecord(pod.UID)
	return true, nil
}

// syncMirror keeps a static pod's mirror pod in the API server. A failure
// is logged and retried on the next sync: it must not stop the pod.
func (s *Syncer) syncMirror(ctx context.Context, pod *corev1.Pod) {
	if s.cfg.Mirrors == nil || !s.cfg.IsStatic(pod) {
		return
	}
	if err := s.cfg.Mirrors.Sync(ctx, pod); err != nil {
		klog.FromContext(ctx).Error(err, "Failed to sync mirror pod", "pod", klog.KObj(pod))
	}
}

// PodDir is the pod's directory under PodsDir.
func (s *Syncer) PodDir(uid types.UID) string { return filepath.Join(s.cfg.PodsDir, string(uid)) }

// record returns the pod's record, creating an empty one the first time.
func (s *Syncer) record(uid types.UID) *record {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.records[uid]
	if !ok {
		rec = &record{}
		s.records[uid] = rec
	}
	return rec
}

// Forget drops the record of a pod that is gone (podgone.Owner): its
// back-offs, start failures and termination. SyncTerminatedPod has
// dropped it already, unless the worker never got that far.
func (s *Syncer) Forget(_ context.Context, uid types.UID) { s.dropRecord(uid) }

// dropRecord drops the pod's record; a pod that comes back starts afresh,
// as upstream's.
func (s *Syncer) dropRecord(uid types.UID) {
	s.mu.Lock()
	delete(s.records, uid)
	s.mu.Unlock()
}

// probes returns the prober's results for the pod (none without a prober).
func (s *Syncer) probes(pod *corev1.Pod, rt *runtimestate.Pod) prober.Snapshot {
	if s.cfg.Prober == nil {
		return prober.Snapshot{}
	}
	return s.cfg.Prober.Snapshot(pod, rt)
}

// setTermination records why berth ends the pod.
func (s *Syncer) setTermination(uid types.UID, t *podstatus.Termination) {
	rec := s.record(uid)
	s.mu.Lock()
	defer s.mu.Unlock()
	rec.termination = t
}

// termination is why berth ends the pod, or nil.
func (s *Syncer) termination(uid types.UID) *podstatus.Termination {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rec, ok := s.records[uid]; ok {
		return rec.termination
	}
	return nil
}

// failures are the waiting reasons of the pod's last apply, if any.
func (s *Syncer) failures(uid types.UID) map[string]runtimestate.StartFailure {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rec, ok := s.records[uid]; ok {
		return rec.failures
	}
	return nil
}

func failuresError(f map[string]runtimestate.StartFailure) error {
	names := make([]string, 0, len(f))
	for name := range f {
		names = append(names, name)
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	inProgress := false
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("container %q: %s: %s", n, f[n].Reason, f[n].Message))
		inProgress = inProgress || f[n].InProgress
	}
	err := errors.New(strings.Join(parts, "; "))
	if inProgress {
		// The pod worker retries it soon (transient), not after its backoff.
		return fmt.Errorf("%w (%w)", err, cri.ErrInProgress)
	}
	return err
}
