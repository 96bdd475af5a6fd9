package statussync

import (
	"context"
	"errors"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/cluster/mirrorpod"
	"github.com/berthk8s/berth/internal/pod/podstatus"
	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// DefaultSyncPeriod is the period of the full pass, as upstream's.
const DefaultSyncPeriod = 10 * time.Second

// requestTimeout bounds each API request, so one hung request cannot stall
// every pod's status.
const requestTimeout = 30 * time.Second

// Config holds the syncer's collaborators.
type Config struct {
	Client kubernetes.Interface
	Store  *podstatus.Store
	// Pod returns the pod a source wants for uid (the config pod).
	Pod func(uid types.UID) (*corev1.Pod, bool)
	// MirrorPod returns the API server's mirror pod of a static pod, from
	// the API source. A pod whose config.mirror annotation is not the
	// static pod's config hash is not taken as its mirror.
	MirrorPod func(static *corev1.Pod) (*corev1.Pod, bool)
	// CanBeDeleted reports that the pod workers have terminated the pod and
	// released its resources.
	CanBeDeleted func(uid types.UID) bool
	// CouldHaveRunningContainers reports that the pod may still have
	// running containers (the pod workers' word); nil: never.
	CouldHaveRunningContainers func(uid types.UID) bool
	Clock                      clock.WithTicker
	// SyncPeriod is the period of the full pass; DefaultSyncPeriod when 0.
	SyncPeriod time.Duration
	// ObserveWrite, if set, is called on the Run goroutine after a pod's
	// generated status reached the API server (patched, or found there
	// already). It must not block.
	ObserveWrite func(ctx context.Context, w Written)
}

// Written is one status that reached the API server.
type Written struct {
	UID types.UID
	// Pod is the API object after the write.
	Pod    *corev1.Pod
	Status corev1.PodStatus
	// Since is when the store first held a change of the pod's status that
	// had not been written yet (upstream's status sync latency starts
	// there, whatever changes followed); At is when the write returned.
	Since, At time.Time
}

// Syncer writes pod statuses to the API server.
//
// Concurrency: Run is the one goroutine that owns the per-pod records and
// talks to the API server; Wake may be called from any goroutine.
type Syncer struct {
	cfg  Config
	wake chan struct{}
	// mu guards woken and forgotten: the pods Wake and Forget named since
	// the last pass.
	mu        sync.Mutex
	woken     map[types.UID]struct{}
	forgotten map[types.UID]struct{}
	// records, pending, seq and carry are owned by the Run goroutine.
	records map[types.UID]Record
	pending map[types.UID]pendingChange
	// seq is the store's change count as of the last pass: a pass that is
	// not full plans the pods changed since (podstatus.Store.EntriesSince).
	seq uint64
	// carry holds the pods the last pass left unsettled (see unsettled):
	// every pass plans them again, changed or not.
	carry map[types.UID]struct{}
	// probe is a pod whose write the last pass failed: the pass
	// RetryInterval later plans it alone (runProbe).
	probe types.UID
	// afterPass, when set (tests), is called by Run after every pass.
	afterPass func(periodic bool)
}

// New validates cfg and returns a Syncer. It starts nothing.
func New(cfg Config) (*Syncer, error) {
	if cfg.Client == nil || cfg.Store == nil || cfg.Pod == nil || cfg.MirrorPod == nil || cfg.CanBeDeleted == nil || cfg.Clock == nil {
		return nil, errors.New("statussync: Client, Store, Pod, MirrorPod, CanBeDeleted and Clock are required")
	}
	if cfg.SyncPeriod <= 0 {
		cfg.SyncPeriod = DefaultSyncPeriod
	}
	return &Syncer{cfg: cfg, wake: make(chan struct{}, 1), woken: map[types.UID]struct{}{}, forgotten: map[types.UID]struct{}{},
		records: map[types.UID]Record{}, pending: map[types.UID]pendingChange{}, carry: map[types.UID]struct{}{}}, nil
}

// Wake asks for a pass over pod uid soon without a status change: when the
// pod workers finish the pod (CanBeDeleted turns true). Without it the
// next periodic pass catches up. It never blocks; wakes coalesce.
func (s *Syncer) Wake(uid types.UID) {
	s.mu.Lock()
	s.woken[uid] = struct{}{}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Forget drops what the syncer remembers of a pod that is gone
// (podgone.Owner): what it last wrote and its pending status change. The
// Run goroutine, which owns them, drops them at the start of its next
// pass; the store has forgotten the pod's status by then, so no pass
// plans it again. It never blocks.
func (s *Syncer) Forget(_ context.Context, uid types.UID) {
	s.mu.Lock()
	s.forgotten[uid] = struct{}{}
	s.mu.Unlock()
}

// takeWoken returns the pods woken since the last call, after dropping
// the records of the pods forgotten since.
func (s *Syncer) takeWoken() map[types.UID]struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	for uid := range s.forgotten {
		delete(s.records, uid)
		delete(s.pending, uid)
		delete(s.carry, uid)
	}
	s.forgotten = map[types.UID]struct{}{}
	w := s.woken
	s.woken = map[types.UID]struct{}{}
	return w
}

// RetryInterval is how long after a pass whose writes failed one of those
// pods is tried again, alone: a probe of the API server that costs one
// request. Once a probe goes through, the other pods the failures left are
// planned at once; while the API server is away, one probe follows another
// this often. A status that an outage held back then reaches the API
// server within about RetryInterval of its return, not at the next
// periodic pass (upstream's status manager waits for it, up to 10 s).
const RetryInterval = time.Second

// Run makes a full pass, then one on every store change or Wake, over the
// pods changed or woken since the last pass and those it left unsettled,
// and a full one every SyncPeriod, until ctx ends. After a pass with a
// failed write it probes (RetryInterval). It returns nil.
func (s *Syncer) Run(ctx context.Context) error {
	ctx = klog.NewContext(ctx, klog.FromContext(ctx).WithName("statussync"))
	ticker := s.cfg.Clock.NewTicker(s.cfg.SyncPeriod)
	defer ticker.Stop()
	periodic, probe := true, false
	var retry clock.Timer
	defer func() {
		if retry != nil {
			retry.Stop()
		}
	}()
	for {
		failed := s.pass(ctx, periodic, probe)
		if retry != nil {
			retry.Stop()
			retry = nil
		}
		var retryC <-chan time.Time
		if failed {
			retry = s.cfg.Clock.NewTimer(RetryInterval)
			retryC = retry.C()
		}
		if s.afterPass != nil {
			s.afterPass(periodic)
		}
		if !failed && probe && len(s.carry) > 0 {
			// The probe went through: the others the failures left, now.
			periodic, probe = false, false
			continue
		}
		periodic, probe = false, false
		select {
		case <-ctx.Done():
			return nil
		case <-s.cfg.Store.Changed():
		case <-s.wake:
		case <-retryC:
			probe = true
		case <-ticker.C():
			periodic = true
		}
	}
}

// entries returns the stored entries a pass plans: every pod on a
// periodic pass; else the pods changed since the last pass, the pods Wake
// named and the pods the last pass left unsettled (of those, on a probe,
// only the probed pod). A burst of status changes then costs each pass
// what changed, not every pod of the node.
func (s *Syncer) entries(periodic, probe bool) map[types.UID]podstatus.Entry {
	woken := s.takeWoken()
	if periodic {
		entries, seq := s.cfg.Store.Entries()
		s.seq = seq
		return entries
	}
	for uid := range s.carry {
		if !probe || uid == s.probe {
			woken[uid] = struct{}{}
		}
	}
	entries, seq := s.cfg.Store.EntriesSince(s.seq, woken)
	s.seq = seq
	return entries
}

// pass gathers a snapshot, plans and applies the operations: each pod's
// at once and concurrently with the others' (at most parallelWrites
// requests in flight, within the client's QPS and burst), so no pod's
// status waits behind another's. The records are updated once every
// operation returned, on the Run goroutine. It reports whether a write
// failed (and keeps one such pod as the next probe).
func (s *Syncer) pass(ctx context.Context, periodic, probe bool) bool {
	entries := s.entries(periodic, probe)
	s.notePending(entries)
	pods := make([]Pod, 0, len(entries))
	byUID := make(map[types.UID]*Pod, len(entries))
	for uid, e := range entries {
		pods = append(pods, s.gather(uid, e.Status))
	}
	for i := range pods {
		byUID[pods[i].UID] = &pods[i]
	}
	now := s.cfg.Clock.Now()
	ops := Plan(Inputs{Pods: pods, Records: s.records, Periodic: periodic, Now: now})
	results := make([]outcome, len(ops))
	var wg sync.WaitGroup
	slots := make(chan struct{}, parallelWrites)
	for i, op := range ops {
		if ctx.Err() != nil {
			break
		}
		rec, had := s.records[op.UID]
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			results[i] = s.apply(ctx, byUID[op.UID], op, now, recordState{rec: rec, had: had, periodic: periodic})
		})
	}
	wg.Wait()
	failed := map[types.UID]bool{}
	for i, r := range results {
		switch {
		case r.drop:
			delete(s.records, ops[i].UID)
		case r.set != nil:
			s.records[ops[i].UID] = *r.set
		}
		if r.failed {
			failed[ops[i].UID] = true
		}
		if r.written != nil {
			s.observeWrite(ctx, ops[i].UID, r.written, entries)
		}
	}
	s.settlePending(entries)
	carry := map[types.UID]struct{}{}
	if probe {
		// The unsettled pods the probe did not plan stay unsettled.
		for uid := range s.carry {
			if _, planned := entries[uid]; !planned {
				carry[uid] = struct{}{}
			}
		}
	}
	for i := range pods {
		if s.unsettled(&pods[i], failed[pods[i].UID]) {
			carry[pods[i].UID] = struct{}{}
		}
	}
	s.carry = carry
	s.probe = ""
	for uid := range failed {
		if s.probe == "" || uid < s.probe {
			s.probe = uid
		}
	}
	return len(failed) > 0
}

// unsettled reports whether a pod needs another look on the next pass
// even if its status does not change: it has no API object to write to
// yet (no source has it, or a static pod has no mirror pod), its write
// failed, its terminal phase waits for its containers to stop, or it is
// to be deleted and is not yet. The record is the one the pass left.
func (s *Syncer) unsettled(p *Pod, failed bool) bool {
	if p.Config == nil || p.API == nil || failed {
		return true
	}
	rec := s.records[p.UID]
	return rec.Delayed || (p.Config.DeletionTimestamp != nil && !rec.Deleted)
}

// parallelWrites bounds the status requests in flight in one pass.
const parallelWrites = 16

// recordState is a pod's record as the pass found it, and the pass's
// kind.
type recordState struct {
	rec      Record
	had      bool
	periodic bool
}

// outcome is what one pod's operation does to its record: nothing (both
// zero), set it, or drop it.
type outcome struct {
	set  *Record
	drop bool
	// failed: the write did not happen, or may not have; the pod is
	// planned again on the next pass.
	failed bool
	// written: the generated status reached this API object (set with a
	// successful write only).
	written *writtenAt
}

// writtenAt is the API object a write left and when the write returned.
type writtenAt struct {
	pod *corev1.Pod
	at  time.Time
}

// gather looks up what the planner needs of one stored pod.
func (s *Syncer) gather(uid types.UID, st corev1.PodStatus) Pod {
	p := Pod{UID: uid, Status: st}
	config, ok := s.cfg.Pod(uid)
	if !ok {
		return p
	}
	p.Config = config
	if !podutil.IsStatic(config) {
		p.API = config
	} else if mirror, ok := s.cfg.MirrorPod(config); ok && mirrorpod.IsMirrorOf(mirror, config) {
		p.API = mirror
	}
	if config.DeletionTimestamp != nil {
		p.CanBeDeleted = s.cfg.CanBeDeleted(uid)
	}
	if s.cfg.CouldHaveRunningContainers != nil {
		p.CouldRun = s.cfg.CouldHaveRunningContainers(uid)
	}
	return p
}

// apply performs one pod's operation and returns what becomes of its
// record. It runs concurrently with other pods' operations and touches
// nothing shared but the API server.
func (s *Syncer) apply(ctx context.Context, p *Pod, op Op, now time.Time, st recordState) outcome {
	logger := klog.FromContext(ctx).WithValues("pod", klog.KObj(p.API), "podUID", p.UID)
	ctx = klog.NewContext(ctx, logger)
	var out outcome
	if op.Hold != "" {
		logger.Error(nil, "Not writing the pod status", "reason", op.Hold)
		out.set = &Record{Target: p.API.UID, Status: p.Status, Held: true, Deleted: st.rec.Deleted}
	}
	api := p.API
	if op.Write {
		written, res, ok := s.write(ctx, p, now, st)
		if !ok {
			return res
		}
		api, out = written, res
	}
	if op.Delete && deletable(p.Config, api, api.Status.Phase) && s.delete(ctx, api) {
		rec := st.rec
		if out.set != nil {
			rec = *out.set
		}
		rec.Deleted = true
		out = outcome{set: &rec, written: out.written}
	}
	return out
}

// write patches the API object's status with the merge of its current
// status and berth's. It returns the API object after the write, what
// becomes of the pod's record, and whether it may go on (to a deletion).
func (s *Syncer) write(ctx context.Context, p *Pod, now time.Time, st recordState) (*corev1.Pod, outcome, bool) {
	logger := klog.FromContext(ctx)
	rctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	pods := s.cfg.Client.CoreV1().Pods(p.API.Namespace)
	cur := patchBase(p, st)
	if cur == nil {
		got, err := pods.Get(rctx, p.API.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			logger.V(3).Info("Pod does not exist on the server")
			return nil, forget(st), false
		case err != nil:
			logger.Info("Failed to get status for pod", "err", err)
			return nil, outcome{failed: true}, false
		case got.UID != p.API.UID:
			logger.V(2).Info("Pod was deleted and then recreated, skipping status update", "newUID", got.UID)
			return nil, forget(st), false
		}
		cur = got
	}
	if podutil.IsTerminal(cur.Status.Phase) && p.Status.Phase != cur.Status.Phase {
		logger.Error(nil, "Not writing the pod status", "reason", holdReason(cur.Status.Phase, p.Status.Phase))
		return cur, outcome{set: &Record{Target: cur.UID, Status: p.Status, Held: true, Deleted: st.rec.Deleted}}, true
	}
	merged := merge(cur.Status, p.Status, now, p.CouldRun)
	patch, unchanged, err := statusPatch(cur.UID, cur.Status, merged)
	if err != nil {
		logger.Error(err, "Failed to build the status patch")
		return nil, outcome{failed: true}, false
	}
	if !unchanged {
		updated, err := pods.Patch(rctx, cur.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
		switch {
		case apierrors.IsNotFound(err), apierrors.IsConflict(err):
			// Gone, or replaced by another object of that name.
			logger.V(3).Info("Pod is gone, skipping status update", "err", err)
			return nil, forget(st), false
		case err != nil:
			logger.Info("Failed to update status for pod", "err", err)
			return nil, patchFailed(st), false
		}
		logger.V(3).Info("Patched pod status", "patch", string(patch))
		cur = updated
	} else {
		logger.V(4).Info("Pod status is up to date")
	}
	return cur, outcome{set: &Record{Target: cur.UID, Status: p.Status, Deleted: st.rec.Deleted,
		Delayed: delayed(cur.Status.Phase, p.Status.Phase, p.CouldRun), Object: cur},
		written: &writtenAt{pod: cur, at: s.cfg.Clock.Now()}}, true
}

// patchBase returns the API object a write may patch from without reading
// it first, or nil when the write must GET it, as upstream's status
// manager always does. The kubelet is the only writer of the fields it
// owns, so the object its own last write left is exact for them, and a
// change another writer made since to a field it owns is kept: the patch
// carries only what berth changes. Before a first write, the API
// source's view of the object is exact for them too. A periodic pass,
// whose writes reconcile the API object with berth's status (someone else
// may have changed a kubelet field), reads it. This halves the requests
// of a burst's status writes, which share the client's kubeAPIQPS with
// the token requests that hold up the pods' volumes.
func patchBase(p *Pod, st recordState) *corev1.Pod {
	switch {
	case st.periodic:
		return nil
	case st.had && st.rec.Object != nil && st.rec.Target == p.API.UID:
		return st.rec.Object
	case !st.had:
		return p.API
	}
	return nil
}

// delete deletes the API pod at once, only if it is still that object,
// and reports whether it is gone.
func (s *Syncer) delete(ctx context.Context, api *corev1.Pod) bool {
	logger := klog.FromContext(ctx)
	rctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	opts := metav1.DeleteOptions{GracePeriodSeconds: new(int64), Preconditions: metav1.NewUIDPreconditions(string(api.UID))}
	err := s.cfg.Client.CoreV1().Pods(api.Namespace).Delete(rctx, api.Name, opts)
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		logger.Info("Failed to delete pod", "err", err)
		return false
	}
	logger.V(2).Info("Pod fully terminated and removed from the API server")
	return true
}

// patchFailed is the outcome of a PATCH that failed: the server may have
// applied it all the same (a timeout), so neither the status nor the
// object the last write left is known to be the server's. The record keeps
// only that the pod was deleted: the next pass writes the pod's status
// whatever it is, and reads the object first.
func patchFailed(st recordState) outcome {
	return outcome{set: &Record{Deleted: st.rec.Deleted}, failed: true}
}

// forget drops what was written for a pod whose API object is gone or
// replaced, so that a new object gets a full write; that the pod was
// deleted is kept, so it is deleted only once.
func forget(st recordState) outcome {
	if st.rec.Deleted {
		return outcome{set: &Record{Deleted: true}}
	}
	return outcome{drop: true}
}
