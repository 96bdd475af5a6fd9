package podplan

import (
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// The status reason and message of a pod that ran past its
// activeDeadlineSeconds, upstream's (pkg/kubelet/active_deadline.go).
const (
	ReasonDeadlineExceeded  = "DeadlineExceeded"
	MessageDeadlineExceeded = "Pod was active on the node longer than the specified deadline"
)

// Deadline is the pod's activeDeadlineSeconds decision (upstream's
// activeDeadlineHandler): the pod may be active on the node for
// spec.activeDeadlineSeconds after its status.startTime, and fails with
// ReasonDeadlineExceeded once that time has come.
type Deadline struct {
	// At is when the deadline passes (startTime + activeDeadlineSeconds);
	// zero when no deadline applies: the pod sets none, has no start time
	// yet, or its previous status is already terminal. A pod not past it
	// must be synced again at At (the pod worker's wake-up).
	At time.Time
	// Exceeded: Now is at or after At. The pod fails (phase Failed,
	// ReasonDeadlineExceeded) and nothing else is planned: the pod worker
	// terminates it, which kills its containers.
	Exceeded bool
}

// maxDeadlineSeconds bounds the deadlines taken: the API allows at most
// 2^31-1 seconds; a larger one (never valid) would overflow a Duration.
const maxDeadlineSeconds = math.MaxInt32

// decideDeadline is upstream's pastActiveDeadline over the snapshot:
// exceeded once now - startTime >= activeDeadlineSeconds. The deadline is
// read from the pod as it is now, so an update that raises or lowers
// activeDeadlineSeconds moves it at the next sync.
func decideDeadline(pod *corev1.Pod, start time.Time, previous corev1.PodPhase, now time.Time) Deadline {
	ads := pod.Spec.ActiveDeadlineSeconds
	if ads == nil || start.IsZero() || podutil.IsTerminal(previous) || *ads > maxDeadlineSeconds {
		return Deadline{}
	}
	at := start.Add(time.Duration(*ads) * time.Second)
	return Deadline{At: at, Exceeded: !now.Before(at)}
}
