package kuberuntime

import "time"

// Image pull back-off, as upstream's image manager configures its
// flowcontrol.Backoff: 10 s doubling to 300 s per pod and image, reset once
// an entry has been idle for twice the maximum.
const (
	pullBackoffInitial = 10 * time.Second
	pullBackoffMax     = 300 * time.Second
)

// PullBackoffs is one pod's image pull back-off, keyed by image. Its owner
// (the pod's sync) keeps it between Applies; Apply works on a copy.
type PullBackoffs map[string]pullBackoff

func (p PullBackoffs) clone() PullBackoffs {
	out := make(PullBackoffs, len(p))
	for k, v := range p {
		out[k] = v
	}
	return out
}

// gc drops the entries idle long enough to forget (upstream Backoff.GC).
func (p PullBackoffs) gc(now time.Time) {
	for image, b := range p {
		if b.expired(now) {
			delete(p, image)
		}
	}
}

// pullBackoff is one pod+image back-off entry.
type pullBackoff struct {
	Delay      time.Duration
	LastUpdate time.Time
}

// expired reports whether the entry has been idle long enough to forget.
func (b pullBackoff) expired(now time.Time) bool {
	return now.Sub(b.LastUpdate) > 2*pullBackoffMax
}

// inBackoff reports whether a pull must wait: less than Delay has passed
// since the last failed pull.
func (b pullBackoff) inBackoff(now time.Time) bool {
	return now.Sub(b.LastUpdate) < b.Delay
}

// next is the entry after a failed pull at now: the initial delay for a new
// or expired entry, else the delay doubled up to the maximum.
func (b pullBackoff) next(now time.Time) pullBackoff {
	if b.Delay == 0 || b.expired(now) {
		return pullBackoff{Delay: pullBackoffInitial, LastUpdate: now}
	}
	return pullBackoff{Delay: min(2*b.Delay, pullBackoffMax), LastUpdate: now}
}
