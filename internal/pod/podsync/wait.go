package podsync

import (
	"context"
	"errors"
	"strconv"

	"k8s.io/apimachinery/pkg/types"

	"github.com/berthk8s/berth/internal/pod/podplan"
	"github.com/berthk8s/berth/internal/pod/podstatus"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
	"github.com/berthk8s/berth/internal/volumes/transient"
	"github.com/berthk8s/berth/internal/volumes/volume"
)

// Why a sync stopped before the pod's sandbox, in the steps podsync runs
// itself (kuberuntime's ReasonSandboxCreateFailed and
// ReasonNetworkSetupFailed are the runtime manager's): a podstatus.PodWait,
// which the pod's PodReadyToStartContainers message gives after upstream's
// (docs/why-waiting.md).
const (
	// ReasonVolumeNotReady: a volume of the pod is not set up (a missing
	// configMap or secret, a PVC not bound, a CSI driver failing); the
	// message names the first.
	ReasonVolumeNotReady = "VolumeNotReady"
	// ReasonClaimsNotPrepared: the pod's ResourceClaims are not prepared
	// by their DRA drivers (not allocated or reserved yet, a driver
	// missing or failing).
	ReasonClaimsNotPrepared = "ClaimsNotPrepared"
)

// volumeWait is why the pod's volumes are not set up, naming the first
// volume that failed (volume.SetUpError) and why.
func volumeWait(err error) runtimestate.StartFailure {
	f := runtimestate.StartFailure{Reason: ReasonVolumeNotReady, Message: "volumes are not ready: " + err.Error(), Waiting: transient.IsWaiting(err)}
	var se *volume.SetUpError
	if errors.As(err, &se) {
		f.Message = "volume " + strconv.Quote(se.Volume) + " is not ready: " + se.Err.Error()
	}
	return f
}

// claimsWait is why the pod's claims are not prepared.
func claimsWait(err error) runtimestate.StartFailure {
	return runtimestate.StartFailure{Reason: ReasonClaimsNotPrepared, Message: "resource claims are not prepared: " + err.Error()}
}

// stoppedAt records in the pod's record what stopped this sync before the
// pod's sandbox was ready (nil: nothing did), counting the syncs in a row
// that stopped for the same reason, and generates the status again from
// the same snapshot and plan when that changed: its
// PodReadyToStartContainers condition says so.
func (s *Syncer) stoppedAt(ctx context.Context, snap *snapshot, rec *record, plan podplan.Actions, f *runtimestate.StartFailure) {
	s.mu.Lock()
	prev := rec.wait
	next := nextWait(prev, f)
	rec.wait = next
	s.mu.Unlock()
	if prev == nil && next == nil {
		return
	}
	s.generate(ctx, snap, waiting(plan, rec.failures), plan.RestartAll, false)
}

// nextWait is the pod's wait after a sync that stopped for f (nil: it
// got past the sandbox): one more failure in a row for the same reason,
// unless f is a wait the pod worker polls (StartFailure.Waiting).
func nextWait(prev *podstatus.PodWait, f *runtimestate.StartFailure) *podstatus.PodWait {
	if f == nil {
		return nil
	}
	n := 1
	if prev != nil && prev.Reason == f.Reason && !f.Waiting {
		n = prev.Failures + 1
	}
	return &podstatus.PodWait{Reason: f.Reason, Message: f.Message, Failures: n}
}

// wait is what stopped the pod's last sync before its sandbox, or nil.
func (s *Syncer) wait(uid types.UID) *podstatus.PodWait {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rec, ok := s.records[uid]; ok {
		return rec.wait
	}
	return nil
}
