package podplan

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// Inputs is everything Compute may look at. The caller takes the snapshot;
// Compute never reads anything else (no clock, no managers, no globals),
// never modifies it and keeps no reference to it after returning.
type Inputs struct {
	Pod     *corev1.Pod       // required
	Runtime *runtimestate.Pod // may be nil or empty: nothing in the runtime yet
	// Backoff holds this pod's CrashLoopBackOff entries, keyed by container
	// name. Compute returns the updated entries in Actions.Backoff.
	Backoff map[string]BackoffEntry
	// Probes carries probe verdicts that force a restart (filled in by the
	// prober once it exists; the zero value means "no verdicts").
	Probes ProbeSnapshot
	Now    time.Time
	// Policy holds the backoff limits; the zero value means upstream defaults.
	Policy BackoffPolicy
	// RestartingAll: the pod's previous status has the
	// AllContainersRestarting condition True (podutil.RestartingAll): a
	// RestartAllContainers restart was decided by an earlier sync and its
	// containers may not all be removed yet. Whether an exit in Runtime
	// starts one now is Compute's to see (restartall.go).
	RestartingAll bool
	// StartTime is the pod's status.startTime (the last status berth
	// generated, else the API's), zero while it has none; PreviousPhase is
	// that status's phase. They decide activeDeadlineSeconds (deadline.go).
	StartTime     time.Time
	PreviousPhase corev1.PodPhase
	// Actuated is what berth last set on each container, by name
	// (internal/pod/allocation), and ActuatedPod on the pod cgroup (its
	// pod-level resources). Pod carries the allocation; where they differ,
	// a resize is planned (resize.go). Nil Actuated means nothing is
	// recorded: every container counts as running with its allocation.
	Actuated    map[string]corev1.ResourceRequirements
	ActuatedPod *corev1.ResourceRequirements
}

// ProbeSnapshot is what the prober knows about the pod's running
// containers. Every map is keyed by runtime container ID, so a verdict about
// one instance can never apply to the next one. Nil maps mean "no verdicts".
type ProbeSnapshot struct {
	// LivenessFailed and StartupFailed: the instance failed its liveness or
	// startup probe (failureThreshold reached) and must be killed.
	LivenessFailed map[string]bool
	StartupFailed  map[string]bool
	// Started: the instance passed its startup probe. An instance whose
	// spec has no startup probe is started once it runs, whatever this map
	// says; one whose spec has a startup probe is started only when true
	// here. (Restartable init containers wait on it.)
	Started map[string]bool
}

// BackoffPolicy sets a back-off's timing (backoff.go: Holds, Next,
// Expired). Zero fields take upstream's CrashLoopBackOff defaults: 10 s
// initial, doubling to 300 s, reset after 2*Max (10 min) without an
// event. For CrashLoopBackOff, Max is
// crashLoopBackOff.maxContainerRestartPeriod; Initial is lowered to it
// when larger. The image pull back-off is another policy over the same
// algorithm (internal/pod/kuberuntime).
type BackoffPolicy struct {
	Initial time.Duration
	Max     time.Duration
}

// BackoffEntry is one back-off's state: a container's restarts, or one
// image's pulls for a pod. Values are immutable snapshots: Compute and
// BackoffPolicy's methods never change an entry in place.
type BackoffEntry struct {
	Delay      time.Duration
	LastUpdate time.Time
	// Hash is HashContainer of the spec the entry was recorded for. An entry
	// whose Hash differs from the current spec is ignored, so a spec change
	// resets the backoff (upstream keys its backoff by the container hash).
	// The image pull back-off leaves it 0.
	Hash uint64
}

// KillReason says why a container is killed; it feeds the Killing event and
// picks the grace period (a probe's terminationGracePeriodSeconds applies
// when Reason is KillReasonLivenessProbe or KillReasonStartupProbe).
type KillReason struct {
	Reason  string // one of the KillReason* constants
	Message string // e.g. "Container web definition changed, will be restarted"
}

// Kill reasons. The probe and unknown values are upstream's.
const (
	KillReasonSpecChanged   = "SpecChanged"
	KillReasonLivenessProbe = "LivenessProbe"
	KillReasonStartupProbe  = "StartupProbe"
	KillReasonUnknown       = "Unknown"
	// KillReasonResize: a resized resource's resizePolicy is
	// RestartContainer; the container is started again with its new
	// resources.
	KillReasonResize = "Resize"
	// KillReasonRestartAllContainers: the container is reset by a
	// RestartAllContainers restart (Actions.Reset); killed with no grace
	// period (at least 2 s, as any kill) and no preStop hook, with
	// upstream's Killing message KillMessageRestartAllContainers.
	KillReasonRestartAllContainers  = "RestartAllContainers"
	KillMessageRestartAllContainers = "killing"
)

// WaitingReasonCrashLoopBackOff is the Waiting reason of a container held
// back by its restart backoff.
const WaitingReasonCrashLoopBackOff = "CrashLoopBackOff"

// ContainerRef names a runtime container to kill.
type ContainerRef struct {
	ID   string
	Name string
}

// Waiting is why a container that should run is not started now.
type Waiting struct {
	Reason  string // "CrashLoopBackOff"
	Message string // "back-off 10s restarting failed container=web pod=web-node_default(uid)"
}

// RestartAll is where a pod is in a RestartAllContainers restart
// (upstream's ShouldAllContainersRestart and
// AllContainersRestartCleanedUp):
//
//	RestartAllNone       no restart under way
//	RestartAllResetting  a container exited with a RestartAllContainers
//	                     rule (or a restart was under way) and the runtime
//	                     still holds containers of the pod: Actions.Reset
//	                     lists them and nothing else is planned; the pod's
//	                     AllContainersRestarting condition is True
//	RestartAllCleanedUp  a restart was under way and no container is left:
//	                     the pod starts over (first init container, in the
//	                     same sandbox); the condition goes False and the
//	                     removed containers show RestartingAllContainers
type RestartAll int

const (
	RestartAllNone RestartAll = iota
	RestartAllResetting
	RestartAllCleanedUp
)

func (r RestartAll) String() string {
	switch r {
	case RestartAllResetting:
		return "Resetting"
	case RestartAllCleanedUp:
		return "CleanedUp"
	}
	return "None"
}

// ResetContainer is one runtime container a RestartAllContainers reset
// removes; Kill says it has not exited and is stopped first (with
// KillReasonRestartAllContainers).
type ResetContainer struct {
	ContainerRef
	Kill bool
}

// Actions is what the executor must do, in this order: Reset (when
// RestartAll is RestartAllResetting, the only thing planned), else KillPod
// (all containers then all sandboxes), else kill KillContainers; then create the
// sandbox when CreateSandbox; then start EphemeralContainers in order
// (upstream starts them before the init containers, so that an init
// container that fails to start does not hold them back), then
// InitContainers in order (an
// ordinary init container that fails to start stops the sync there; a
// sidecar that fails to start does not), then StartContainers in order. Compute returns fresh maps and slices that the
// caller owns; empty ones are nil.
type Actions struct {
	// KillPod: stop every container and every sandbox of the pod. Set when
	// a new sandbox is needed and the runtime still holds anything of the
	// pod (even a dead sandbox, so its network is released), when an init
	// container failed under restartPolicy Never, and when no container
	// would run any more.
	KillPod bool
	// CreateSandbox with the given Attempt; otherwise SandboxID is the ready
	// sandbox to start containers in ("" when nothing is to be started) and
	// Attempt that sandbox's attempt (for the sandbox config containers are
	// created with).
	CreateSandbox bool
	SandboxID     string
	Attempt       uint32
	// InitContainers are indices into Spec.InitContainers to start,
	// ascending: at most one ordinary init container (the next one), plus
	// sidecars (restartable init containers) to (re)start.
	InitContainers []int
	// StartContainers are indices into Spec.Containers, ascending.
	StartContainers []int
	// StartCreated maps the name of a container to start (in
	// InitContainers or StartContainers) to the ID of its latest instance
	// when that one was created in the kept sandbox from the same spec and
	// never started (berth stopped between CreateContainer and
	// StartContainer): that instance is started instead of a new one being
	// created, so it is not counted as a restart and nothing is left
	// behind. Upstream replaces it.
	StartCreated map[string]string
	// EphemeralContainers are the ephemeral containers to start, by
	// ascending index into Spec.EphemeralContainers: those that never ran,
	// only in a kept ready sandbox (never with CreateSandbox or KillPod).
	// They are never restarted nor killed alone; KillPod stops them.
	EphemeralContainers []EphemeralStart
	// KillContainers are running containers to stop, with the reason.
	KillContainers map[ContainerRef]KillReason
	// Waiting are containers that should run but are held back (backoff;
	// an ephemeral container's target that does not run), keyed by
	// container name.
	Waiting map[string]Waiting
	// Backoff is the full, updated backoff map for the pod: the caller
	// replaces its stored map with this one.
	Backoff map[string]BackoffEntry
	// RestartAll is where the pod is in a RestartAllContainers restart;
	// the status generator reports it (AllContainersRestarting).
	RestartAll RestartAll
	// Reset lists, while RestartAll is RestartAllResetting, every runtime
	// instance of the pod's containers to kill (if not exited) and remove,
	// one after the other, in upstream's order: the regular containers,
	// then the init containers, that did not trigger the restart, then
	// those (regular, then init) whose exit did; each group in spec order,
	// a container's instances newest first. The sandbox stays.
	Reset []ResetContainer
	// Resize is the in-place resize to perform after the kills and before
	// the starts (resize.go).
	Resize Resize
	// Deadline is the pod's activeDeadlineSeconds decision. When it is
	// Exceeded nothing else is planned (Backoff aside): the pod fails and
	// is terminated.
	Deadline Deadline
}
