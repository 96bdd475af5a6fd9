package statussync

import (
	"context"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berthk8s/berth/internal/pod/podstatus"
)

// pendingChange is what the syncer knows of a pod's unwritten status
// changes: the store's change time it saw last, and when the oldest change
// not yet written was stored (zero: none is pending).
type pendingChange struct {
	last, since time.Time
}

// notePending records the changes the store shows since the last pass: a
// change while none was pending starts the pod's status sync latency.
func (s *Syncer) notePending(entries map[types.UID]podstatus.Entry) {
	for uid, e := range entries {
		p := s.pending[uid]
		if e.Changed.Equal(p.last) {
			continue
		}
		if p.since.IsZero() {
			p.since = e.Changed
		}
		p.last = e.Changed
		s.pending[uid] = p
	}
}

// observeWrite reports one status written to the API server, from the
// oldest change it carried, and clears the pod's pending change.
func (s *Syncer) observeWrite(ctx context.Context, uid types.UID, w *writtenAt, entries map[types.UID]podstatus.Entry) {
	p := s.pending[uid]
	since := p.since
	p.since = time.Time{}
	s.pending[uid] = p
	if s.cfg.ObserveWrite == nil || since.IsZero() {
		return
	}
	s.cfg.ObserveWrite(ctx, Written{UID: uid, Pod: w.pod, Status: entries[uid].Status, Since: since, At: w.at})
}

// settlePending clears the pending change of every pod whose status is
// the one last written (a change undone before it was written), so a
// later change starts its own latency.
func (s *Syncer) settlePending(entries map[types.UID]podstatus.Entry) {
	for uid, p := range s.pending {
		e, planned := entries[uid]
		if p.since.IsZero() || !planned {
			continue
		}
		rec, ok := s.records[uid]
		if ok && !rec.Held && apiequality.Semantic.DeepEqual(rec.Status, e.Status) {
			p.since = time.Time{}
			s.pending[uid] = p
		}
	}
}
