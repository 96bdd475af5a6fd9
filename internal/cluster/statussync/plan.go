package statussync

import (
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// Pod is what the planner knows of one pod in the status store.
type Pod struct {
	// UID is the store's key: the UID of the pod as its source gives it
	// (for a static pod, not its mirror pod's).
	UID types.UID
	// Status is berth's generated status.
	Status corev1.PodStatus
	// Config is the pod as its source gives it; nil when no source has it.
	Config *corev1.Pod
	// API is the API object the status goes to, as last seen: the pod
	// itself for an API pod, the current mirror pod for a static pod; nil
	// when there is none (a static pod without a mirror pod yet).
	API *corev1.Pod
	// CanBeDeleted: the pod workers report the pod terminated and its
	// resources released.
	CanBeDeleted bool
	// CouldRun: the pod workers report that the pod may still have running
	// containers (its kill has not completed). A terminal phase is not
	// written then (see merge).
	CouldRun bool
}

// Record is what the syncer keeps of one pod between passes.
type Record struct {
	// Target is the UID of the API object last written.
	Target types.UID
	// Status is the generated status last written, or held.
	Status corev1.PodStatus
	// Held: Status was not written because the API object is in another,
	// terminal phase.
	Held bool
	// Deleted: the API pod was deleted (or was gone).
	Deleted bool
	// Delayed: Status has a terminal phase that was not written because
	// the pod could still have running containers; it is written once it
	// cannot.
	Delayed bool
	// Object is the API object as the last write left it (the PATCH's
	// answer, or the GET's when nothing was to be patched), the base of
	// the next write's patch; nil when none. Read only.
	Object *corev1.Pod
}

// Inputs is one pass's snapshot.
type Inputs struct {
	Pods    []Pod
	Records map[types.UID]Record
	// Periodic: the full pass, which also reconciles the API objects'
	// statuses with berth's.
	Periodic bool
	Now      time.Time
}

// Op is what to do for one pod.
type Op struct {
	UID types.UID
	// Write: patch the API object's status.
	Write bool
	// Hold, when not empty, says why berth's status is not written.
	Hold string
	// Delete: delete the API pod (grace 0, UID precondition) once its
	// status is written, or now when nothing is to be written.
	Delete bool
}

// Plan returns the operations of one pass, by UID, leaving out pods with
// nothing to do. It is upstream's syncBatch decision: a status is written
// when it is new for its API object (another status or another object than
// last written), and on the periodic pass when writing it would change the
// API object's status (needsReconcile). A status whose phase differs from
// the API object's terminal phase is held instead: berth never moves a pod
// out of a terminal phase (upstream forces the API's phase back). A move to
// a terminal phase is written without it while the pod could still have
// running containers, and in full once it cannot. An API pod is
// deleted after a deletion timestamp, once terminal and CanBeDeleted.
func Plan(in Inputs) []Op {
	var ops []Op
	for i := range in.Pods {
		p := &in.Pods[i]
		if p.Config == nil || p.API == nil {
			continue
		}
		rec, seen := in.Records[p.UID]
		fresh := seen && rec.Target == p.API.UID && kubeletEqual(rec.Status, p.Status) && (!rec.Delayed || p.CouldRun)
		op := Op{UID: p.UID}
		phaseAfter := p.API.Status.Phase
		if apiPhase := p.API.Status.Phase; podutil.IsTerminal(apiPhase) && p.Status.Phase != apiPhase {
			if !fresh || !rec.Held {
				op.Hold = holdReason(apiPhase, p.Status.Phase)
			}
		} else {
			op.Write = !fresh || rec.Held ||
				(in.Periodic && !equal(p.API.Status, merge(p.API.Status, p.Status, in.Now, p.CouldRun)))
			if op.Write && !delayed(p.API.Status.Phase, p.Status.Phase, p.CouldRun) {
				phaseAfter = p.Status.Phase
			}
		}
		op.Delete = !rec.Deleted && deletable(p.Config, p.API, phaseAfter) && p.CanBeDeleted
		if op.Write || op.Hold != "" || op.Delete {
			ops = append(ops, op)
		}
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].UID < ops[j].UID })
	return ops
}

// delayed reports whether the move from the API's phase to ours is held
// back: a move to a terminal phase while the pod could still have running
// containers (upstream's mergePodStatus).
func delayed(api, ours corev1.PodPhase, couldRun bool) bool {
	return couldRun && !podutil.IsTerminal(api) && podutil.IsTerminal(ours)
}

// deletable reports whether berth may delete api, the API object of
// config, with the given phase: an API pod (never a mirror pod: static pods
// are not deleted through the API) that has a deletion timestamp and a
// terminal phase. The caller adds the pod workers' word (CanBeDeleted).
func deletable(config, api *corev1.Pod, phase corev1.PodPhase) bool {
	return !podutil.IsStatic(config) && !podutil.IsMirror(api) &&
		api.DeletionTimestamp != nil && podutil.IsTerminal(phase)
}

func holdReason(api, ours corev1.PodPhase) string {
	return fmt.Sprintf("the API server has the pod in terminal phase %s and berth's status has phase %s: a terminal phase is never changed", api, ours)
}
