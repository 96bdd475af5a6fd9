package podworker

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// UpdateType says why a pod worker is asked to sync.
type UpdateType int

const (
	// SyncPodSync: periodic resync or a runtime (PLEG) event.
	SyncPodSync UpdateType = iota
	// SyncPodUpdate: the pod's config changed.
	SyncPodUpdate
	// SyncPodCreate: the pod is new to berth.
	SyncPodCreate
	// SyncPodKill: the pod must stop (removed, deleted, evicted, orphaned).
	SyncPodKill
)

func (t UpdateType) String() string {
	switch t {
	case SyncPodSync:
		return "sync"
	case SyncPodUpdate:
		return "update"
	case SyncPodCreate:
		return "create"
	case SyncPodKill:
		return "kill"
	}
	return "unknown"
}

// UpdateOptions is one request to a pod worker.
type UpdateOptions struct {
	Type UpdateType
	// Pod is the config pod. Nil only when RuntimePod is set: a pod found
	// in the runtime that no source knows (an orphan), which can only be killed.
	Pod        *corev1.Pod
	RuntimePod *runtimestate.Pod
	// StartTime is when berth first saw the update (for latency metrics).
	StartTime time.Time
	// KillGracePeriod overrides the pod's grace period for a kill; it can
	// only shorten a grace period already in force, never lengthen it.
	KillGracePeriod *int64
	// KillReason and KillMessage, on a kill berth decides itself (a node
	// shutdown, an eviction), say why: the pod's final status reports them
	// (Kill.Reason and Kill.Message). The first kill with a reason wins.
	KillReason  string
	KillMessage string
	// KillNoDisruptionTarget leaves the DisruptionTarget condition out of
	// that status (upstream's local storage evictions add none).
	KillNoDisruptionTarget bool
}

// Kill is what the Syncer is told when it must stop a pod.
type Kill struct {
	// GracePeriod is the effective grace period, in seconds.
	GracePeriod int64
	// Reason and Message are set when berth itself ends the pod (the
	// KillReason and KillMessage of the update that asked first); empty
	// for a pod deleted, removed from its source or finished on its own.
	Reason, Message string
	// NoDisruptionTarget: the status gets no DisruptionTarget condition
	// (UpdateOptions.KillNoDisruptionTarget).
	NoDisruptionTarget bool
}

// SyncOutcome is what a SyncPod call that did not fail reports: how the
// worker goes on.
type SyncOutcome int

const (
	// SyncSteady: the pod keeps running; it is synced again on its next
	// update, runtime event or resync.
	SyncSteady SyncOutcome = iota
	// SyncAgain: the call changed the runtime in a way the next sync must
	// act on at once, without waiting for an event (a RestartAllContainers
	// reset removed the pod's containers: the next sync starts them). The
	// worker syncs again right away, over a runtime status observed after
	// the call.
	SyncAgain
	// SyncTerminal: the pod reached a terminal phase (Succeeded or Failed)
	// and must be terminated.
	SyncTerminal
)

// SyncResult is what a SyncPod call that did not fail reports.
type SyncResult struct {
	// Outcome says how the worker goes on.
	Outcome SyncOutcome
	// WakeAt, when not zero, is a time by which the pod must be synced
	// again whatever else happens (the pod's active deadline): the
	// worker's next resync or retry comes no later than it. A time
	// already past syncs again at the next SyncDue.
	WakeAt time.Time
}

func (o SyncOutcome) String() string {
	switch o {
	case SyncAgain:
		return "again"
	case SyncTerminal:
		return "terminal"
	}
	return "steady"
}

// Syncer performs the work of each phase for one pod. The pod worker calls
// at most one method at a time for a given UID; calls for different UIDs run
// concurrently. Implemented by internal/pod/podsync.
type Syncer interface {
	// SyncPod brings the pod toward its desired state and says how the
	// worker goes on (the outcome is ignored when err is not nil: the
	// worker retries after its back-off, or by WakeAt if sooner).
	SyncPod(ctx context.Context, t UpdateType, pod *corev1.Pod, rt *runtimestate.Pod) (SyncResult, error)
	// SyncTerminatingPod stops every container of the pod within
	// kill.GracePeriod seconds and returns nil only once nothing of the pod
	// runs any more.
	SyncTerminatingPod(ctx context.Context, pod *corev1.Pod, rt *runtimestate.Pod, kill Kill) error
	// SyncTerminatingRuntimePod kills an orphaned runtime pod (no config).
	SyncTerminatingRuntimePod(ctx context.Context, rt *runtimestate.Pod) error
	// SyncTerminatedPod releases what is left (sandbox, directories) after
	// every container has stopped. It reports gone when the pod was no
	// longer desired and everything of it was removed: the worker then
	// announces the pod gone as it finishes (Config.Gone). A pod still
	// desired (kept for its logs and status) is announced once it is not
	// (SyncKnownPods).
	SyncTerminatedPod(ctx context.Context, pod *corev1.Pod, rt *runtimestate.Pod) (gone bool, err error)
}

// StatusCache is the PLEG's pod status cache as the workers read it.
type StatusCache interface {
	// GetNewerThan blocks until the cache holds a status for uid observed
	// after minTime (or ctx ends), then returns it. A pod the runtime does
	// not have yields an empty, non-nil Pod.
	GetNewerThan(ctx context.Context, uid types.UID, minTime time.Time) (*runtimestate.Pod, error)
}
