package kuberuntime

import (
	"maps"
	"time"

	"github.com/berthk8s/berth/internal/pod/podplan"
)

// Image pull back-off, upstream's numbers (pkg/kubelet's imageBackOffPeriod
// and MaxImageBackOff): 10 s doubling to 300 s per pod and image, reset once
// an entry has been idle for twice the maximum. The algorithm is the
// planner's (podplan.BackoffPolicy), the one berth has.
const (
	pullBackoffInitial = 10 * time.Second
	pullBackoffMax     = 300 * time.Second
)

// pullBackoff is the image pull back-off's policy.
func pullBackoff() podplan.BackoffPolicy {
	return podplan.BackoffPolicy{Initial: pullBackoffInitial, Max: pullBackoffMax}
}

// PullBackoffs is one pod's image pull back-off, keyed by image. Its owner
// (the pod's sync) keeps it between Applies; Apply works on a copy.
type PullBackoffs map[string]podplan.BackoffEntry

func (p PullBackoffs) clone() PullBackoffs {
	out := make(PullBackoffs, len(p))
	maps.Copy(out, p)
	return out
}

// holds reports whether a pull of image must wait at now: less than its
// entry's delay has passed since the last failed pull.
func (p PullBackoffs) holds(image string, now time.Time) bool {
	e := p[image]
	return pullBackoff().Holds(e, e.LastUpdate, now)
}

// failed records a failed pull of image at now.
func (p PullBackoffs) failed(image string, now time.Time) {
	p[image] = pullBackoff().Next(p[image], now, now)
}

// gc drops the entries idle long enough to forget (upstream Backoff.GC).
func (p PullBackoffs) gc(now time.Time) {
	maps.DeleteFunc(p, func(_ string, e podplan.BackoffEntry) bool { return pullBackoff().Expired(e, now) })
}
