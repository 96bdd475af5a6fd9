package podworker

import "fmt"

// Phase is where a pod UID is in its life on this node. A phase only moves
// forward; a UID never goes back to an earlier phase (a reused UID gets a new
// worker once SyncKnownPods has forgotten the old one).
//
// Timeline of one pod UID:
//
//	Update(create)        SyncPod ... SyncPod          kill / terminal     SyncTerminatingPod   SyncTerminatedPod   SyncKnownPods
//	     |                 (resync every ResyncInterval)       |            (until it returns nil) (until nil)      (not desired)
//	     v                                                     v                    v                 v                 v
//	  Waiting ──start allowed──> Syncing ─────────────────> Terminating ───────> Terminated ──────> Finished ──────> forgotten
//	     └──────────────────────── kill ──────────────────────^
//
// Waiting exists for static pods: a static pod whose full name (name and
// namespace) is still held by an older UID waits until that UID is Finished
// (editing a manifest yields a new UID with the same name). Other pods leave
// Waiting on their first update.
type Phase int

const (
	// Waiting: the worker exists but SyncPod has not been allowed to run yet.
	Waiting Phase = iota
	// Syncing: SyncPod runs on every update and resync.
	Syncing
	// Terminating: termination was requested (kill, deletion, terminal phase,
	// orphan); no new container may start; SyncTerminatingPod runs until it
	// returns nil.
	Terminating
	// Terminated: nothing of the pod runs any more; SyncTerminatedPod runs
	// until it returns nil.
	Terminated
	// Finished: SyncTerminatedPod succeeded; the worker goroutine has exited
	// and the UID is remembered (so it is not restarted) until SyncKnownPods
	// forgets it.
	Finished
)

func (p Phase) String() string {
	switch p {
	case Waiting:
		return "waiting"
	case Syncing:
		return "syncing"
	case Terminating:
		return "terminating"
	case Terminated:
		return "terminated"
	case Finished:
		return "finished"
	}
	return fmt.Sprintf("Phase(%d)", int(p))
}

// Event is something that happened to a worker: an update arrived (or came
// due), or a Syncer call returned.
type Event int

const (
	// UpdateSync: a non-kill update (create, update, sync) arrived or a
	// requeue came due.
	UpdateSync Event = iota
	// UpdateKill: termination was requested (a kill update, a pod with a
	// deletion timestamp or a terminal status phase, an orphan).
	UpdateKill
	// StartAllowed: the static-pod gate let a Waiting pod start.
	StartAllowed
	// SyncOK: SyncPod returned nil and SyncSteady.
	SyncOK
	// SyncReturnedAgain: SyncPod returned nil and SyncAgain (its effects
	// call for another sync at once).
	SyncReturnedAgain
	// SyncReturnedTerminal: SyncPod returned SyncTerminal (the pod reached
	// Succeeded or Failed on its own).
	SyncReturnedTerminal
	// SyncFailed: SyncPod (or reading the status it needed) failed.
	SyncFailed
	// TerminatingDone: SyncTerminatingPod returned nil.
	TerminatingDone
	// OrphanTerminatingDone: SyncTerminatingRuntimePod returned nil; an
	// orphan has no config, so there is nothing to clean up afterwards.
	OrphanTerminatingDone
	// TerminatingFailed: SyncTerminatingPod or SyncTerminatingRuntimePod failed.
	TerminatingFailed
	// TerminatedDone: SyncTerminatedPod returned nil.
	TerminatedDone
	// TerminatedFailed: SyncTerminatedPod failed.
	TerminatedFailed
)

var eventNames = [...]string{
	UpdateSync: "UpdateSync", UpdateKill: "UpdateKill", StartAllowed: "StartAllowed",
	SyncOK: "SyncOK", SyncReturnedAgain: "SyncReturnedAgain", SyncReturnedTerminal: "SyncReturnedTerminal", SyncFailed: "SyncFailed",
	TerminatingDone: "TerminatingDone", OrphanTerminatingDone: "OrphanTerminatingDone",
	TerminatingFailed: "TerminatingFailed", TerminatedDone: "TerminatedDone",
	TerminatedFailed: "TerminatedFailed",
}

func (e Event) String() string {
	if e >= 0 && int(e) < len(eventNames) {
		return eventNames[e]
	}
	return fmt.Sprintf("Event(%d)", int(e))
}

// Action is what the worker must do after an event.
type Action int

const (
	// None: nothing (the event is stale or impossible in this phase, or the
	// work is complete).
	None Action = iota
	// CheckStart: ask the static-pod gate; if it allows, feed StartAllowed.
	CheckStart
	// CallSyncPod: call Syncer.SyncPod with the latest pod.
	CallSyncPod
	// CallSyncTerminatingPod: call Syncer.SyncTerminatingPod (or
	// SyncTerminatingRuntimePod for an orphan) with the effective grace period.
	CallSyncTerminatingPod
	// CallSyncTerminatedPod: call Syncer.SyncTerminatedPod.
	CallSyncTerminatedPod
	// RequeueResync: sync again after ResyncInterval (with jitter).
	RequeueResync
	// RequeueBackoff: retry after BackoffPeriod (with jitter).
	RequeueBackoff
)

var actionNames = [...]string{
	None: "None", CheckStart: "CheckStart", CallSyncPod: "CallSyncPod",
	CallSyncTerminatingPod: "CallSyncTerminatingPod", CallSyncTerminatedPod: "CallSyncTerminatedPod",
	RequeueResync: "RequeueResync", RequeueBackoff: "RequeueBackoff",
}

func (a Action) String() string {
	if a >= 0 && int(a) < len(actionNames) {
		return actionNames[a]
	}
	return fmt.Sprintf("Action(%d)", int(a))
}

// Transition is the whole pod lifecycle. It is pure. Update events are
// idempotent on the phase: Update applies them when an update is enqueued
// (so a kill is visible at once) and the worker applies them again when it
// takes the update (to learn which call to make).
//
//	phase        event                  -> phase        action
//	Waiting      UpdateSync             -> Waiting      CheckStart
//	Waiting      UpdateKill             -> Terminating  CallSyncTerminatingPod
//	Waiting      StartAllowed           -> Syncing      CallSyncPod
//	Syncing      UpdateSync             -> Syncing      CallSyncPod
//	Syncing      UpdateKill             -> Terminating  CallSyncTerminatingPod
//	Syncing      SyncOK                 -> Syncing      RequeueResync
//	Syncing      SyncReturnedAgain      -> Syncing      CallSyncPod
//	Syncing      SyncReturnedTerminal   -> Terminating  CallSyncTerminatingPod
//	Syncing      SyncFailed             -> Syncing      RequeueBackoff
//	Terminating  UpdateSync             -> Terminating  CallSyncTerminatingPod
//	Terminating  UpdateKill             -> Terminating  CallSyncTerminatingPod
//	Terminating  SyncOK                 -> Terminating  CallSyncTerminatingPod  (SyncPod was running when the kill came)
//	Terminating  SyncReturnedAgain      -> Terminating  CallSyncTerminatingPod  (idem)
//	Terminating  SyncReturnedTerminal   -> Terminating  CallSyncTerminatingPod  (idem)
//	Terminating  SyncFailed             -> Terminating  CallSyncTerminatingPod  (idem; usually cancelled by the kill)
//	Terminating  TerminatingDone        -> Terminated   CallSyncTerminatedPod
//	Terminating  OrphanTerminatingDone  -> Finished     None
//	Terminating  TerminatingFailed      -> Terminating  RequeueBackoff
//	Terminated   UpdateSync             -> Terminated   CallSyncTerminatedPod
//	Terminated   UpdateKill             -> Terminated   CallSyncTerminatedPod
//	Terminated   TerminatedDone         -> Finished     None
//	Terminated   TerminatedFailed       -> Terminated   RequeueBackoff
//	Finished     (any)                  -> Finished     None
//	any other pair                      -> unchanged    None  (cannot happen: one call at a time)
func Transition(p Phase, ev Event) (Phase, Action) {
	switch p {
	case Waiting:
		switch ev {
		case UpdateSync:
			return Waiting, CheckStart
		case UpdateKill:
			return Terminating, CallSyncTerminatingPod
		case StartAllowed:
			return Syncing, CallSyncPod
		}
	case Syncing:
		switch ev {
		case UpdateSync, SyncReturnedAgain:
			return Syncing, CallSyncPod
		case UpdateKill, SyncReturnedTerminal:
			return Terminating, CallSyncTerminatingPod
		case SyncOK:
			return Syncing, RequeueResync
		case SyncFailed:
			return Syncing, RequeueBackoff
		}
	case Terminating:
		switch ev {
		case UpdateSync, UpdateKill, SyncOK, SyncReturnedAgain, SyncReturnedTerminal, SyncFailed:
			return Terminating, CallSyncTerminatingPod
		case TerminatingDone:
			return Terminated, CallSyncTerminatedPod
		case OrphanTerminatingDone:
			return Finished, None
		case TerminatingFailed:
			return Terminating, RequeueBackoff
		}
	case Terminated:
		switch ev {
		case UpdateSync, UpdateKill:
			return Terminated, CallSyncTerminatedPod
		case TerminatedDone:
			return Finished, None
		case TerminatedFailed:
			return Terminated, RequeueBackoff
		}
	}
	return p, None
}
