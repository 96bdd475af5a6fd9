package podcert

import (
	"errors"
	"fmt"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
)

// phase is where one podCertificate projection of a pod stands, as
// upstream's credState:
//
//	                        ┌─────────────────┐
//	                        ▼                 │
//	initial ──► wait ──► fresh ──────► waitRefresh
//	              │                           │
//	              ├──────► denied ◄───────────┤
//	              └──────► failed ◄───────────┘
//
// initial and fresh (once beginRefreshAt passed) make a request (made);
// wait and waitRefresh observe it (observe): issued goes to fresh with the
// new key and chain, denied and failed are final; a request gone for
// longer than abandonAfter goes back to initial (from wait) or fresh (from
// waitRefresh), so that a new one is made.
type phase int

const (
	phaseInitial phase = iota
	phaseWait
	phaseFresh
	phaseWaitRefresh
	phaseDenied
	phaseFailed
)

var phaseNames = [...]string{"initial", "wait", "fresh", "waitRefresh", "denied", "failed"}

func (p phase) String() string { return phaseNames[p] }

const (
	// abandonAfter: a request made this long ago (plus jitter) that the
	// API does not show was deleted, as upstream's assumeDeletedThreshold.
	abandonAfter = 10 * time.Minute
	// overdueAfter: this long after beginRefreshAt a certificate not yet
	// refreshed is overdue, as upstream's refreshOverdueDuration.
	overdueAfter = 10 * time.Minute
	// maxJitter bounds the random delay added to beginRefreshAt and to
	// abandonAfter, as upstream's jitterDuration (5 minutes).
	maxJitter = 5 * time.Minute
)

// Upstream's messages and event reasons; upstream_test.go pins them.
// The Denied and Failed events carry msgDeniedEvent and msgFailedEvent:
// upstream's v1.37.2 passes the condition's reason as the format and the
// message as an extra argument (Eventf(pod, Warning, "Denied", cond.Reason,
// eventMessage)), so its event reads "<reason>%!(EXTRA string=...)"; berth
// records the message upstream meant.
const (
	// MsgNotIssued is what a projection waiting for its first
	// certificate fails with (the volume is not ready).
	MsgNotIssued     = "credential bundle is not issued yet"
	msgDenied        = "PodCertificateRequest was permanently denied: reason=%q message=%q"
	msgFailed        = "PodCertificateRequest was permanently failed: reason=%q message=%q"
	msgDeniedEvent   = "PodCertificateRequest %s was denied, reason=%q, message=%q"
	msgFailedEvent   = "PodCertificateRequest %s failed, reason=%q, message=%q"
	msgDeleted       = "PodCertificateRequest %q appears to have been deleted"
	reasonOverdue    = "CertificateOverdueForRefresh"
	msgOverdue       = "PodCertificate refresh overdue"
	reasonExpired    = "CertificateExpired"
	msgExpired       = "PodCertificate expired"
	msgCreateInitial = "while creating initial PodCertificateRequest: %w"
	msgCreateRefresh = "while creating refresh PodCertificateRequest: %w"
	msgCreateOnAPI   = "while creating on API: %w"
	msgGetSA         = "while fetching service account: %w"
	msgGetPCR        = "while getting PodCertificateRequest %q: %w"
	msgGetNode       = "while getting node object from local cache: %w"
	reasonDenied     = certificatesv1.PodCertificateRequestConditionTypeDenied
	reasonFailed     = certificatesv1.PodCertificateRequestConditionTypeFailed
	pcrGenerateName  = "req-"
)

// ErrNotIssued is the error of a projection whose first certificate is
// not issued yet: the signer has not answered (package transient counts it
// as a failure that clears on its own).
var ErrNotIssued = errors.New(MsgNotIssued)

// record is the state of one projection. Its owner (Manager) guards it.
type record struct {
	phase phase
	// key and chain are the credential the pod has (fresh, waitRefresh),
	// refreshAt is beginRefreshAt plus jitter, notAfter its expiry;
	// overdue and expired say those warnings were recorded.
	key, chain       []byte
	refreshAt        time.Time
	notAfter         time.Time
	overdue, expired bool
	pendingKey       []byte    // the key of the request made (wait, waitRefresh)
	pending          string    // that request's name
	abandonAt        time.Time // when a request the API does not show counts as deleted
	reason, message  string    // denied, failed: the signer's condition
}

// needsRequest reports whether a request must be made now: none was made
// yet, or the certificate reached its refresh time.
func (r *record) needsRequest(now time.Time) bool {
	return r.phase == phaseInitial || (r.phase == phaseFresh && !now.Before(r.refreshAt))
}

// made records the request made for r: its key, its name, and when it was
// created (plus jitter), from which a request the API does not show counts
// as deleted.
func (r record) made(key []byte, name string, created time.Time, jitter time.Duration) record {
	r.pendingKey, r.pending, r.abandonAt = key, name, created.Add(abandonAfter+jitter)
	if r.phase == phaseInitial {
		r.phase = phaseWait
	} else {
		r.phase = phaseWaitRefresh
	}
	return r
}

// warning is an event to record about the pod.
type warning struct {
	reason, message string
}

// observe moves a waiting record on by what the API shows of its request
// (nil: not found). It is pure; err says the request seems deleted.
func (r record) observe(pcr *certificatesv1.PodCertificateRequest, namespace string, now time.Time, jitter time.Duration) (record, []warning, error) {
	if r.phase != phaseWait && r.phase != phaseWaitRefresh {
		return r, nil, nil
	}
	if pcr == nil {
		if !now.After(r.abandonAt) {
			return r, nil, nil // the API may not show it yet
		}
		name := r.pending
		r = r.dropPending()
		return r, nil, fmt.Errorf(msgDeleted, namespace+"/"+name)
	}
	full := pcr.Namespace + "/" + pcr.Name
	for _, c := range pcr.Status.Conditions {
		switch c.Type {
		case certificatesv1.PodCertificateRequestConditionTypeDenied:
			return record{phase: phaseDenied, reason: c.Reason, message: c.Message},
				[]warning{{reasonDenied, fmt.Sprintf(msgDeniedEvent, full, c.Reason, c.Message)}}, nil
		case certificatesv1.PodCertificateRequestConditionTypeFailed:
			return record{phase: phaseFailed, reason: c.Reason, message: c.Message},
				[]warning{{reasonFailed, fmt.Sprintf(msgFailedEvent, full, c.Reason, c.Message)}}, nil
		case certificatesv1.PodCertificateRequestConditionTypeIssued:
			return issued(r.pendingKey, pcr.Status, jitter), nil, nil
		}
	}
	if r.phase == phaseWaitRefresh {
		var ws []warning
		r, ws = r.lateness(now)
		return r, ws, nil
	}
	return r, nil, nil
}

// issued is the fresh record of a certificate issued to key. The API
// requires beginRefreshAt and notAfter of an issued request; were they
// missing, the refresh is due at once and the certificate taken as
// expired.
func issued(key []byte, st certificatesv1.PodCertificateRequestStatus, jitter time.Duration) record {
	r := record{phase: phaseFresh, key: key, chain: cleanChain(st.CertificateChain)}
	if st.BeginRefreshAt != nil {
		r.refreshAt = st.BeginRefreshAt.Add(jitter)
	}
	if st.NotAfter != nil {
		r.notAfter = st.NotAfter.Time
	}
	return r
}

// dropPending forgets a request that seems deleted: back to initial
// without a credential, back to fresh with one (a new request is made at
// once, its refresh time having passed).
func (r record) dropPending() record {
	r.pendingKey, r.pending, r.abandonAt = nil, "", time.Time{}
	if r.phase == phaseWait {
		r.phase = phaseInitial
	} else {
		r.phase = phaseFresh
	}
	return r
}

// lateness returns the warnings, each once, of a certificate whose
// refresh is overdue (overdueAfter past beginRefreshAt) or that expired.
func (r record) lateness(now time.Time) (record, []warning) {
	var ws []warning
	if now.After(r.refreshAt.Add(overdueAfter)) && !r.overdue {
		r.overdue = true
		ws = append(ws, warning{reasonOverdue, msgOverdue})
	}
	if now.After(r.notAfter) && !r.expired {
		r.expired = true
		ws = append(ws, warning{reasonExpired, msgExpired})
	}
	return r, ws
}

// bundle is what the pod's files show: the key and the chain, or why
// there are none.
func (r *record) bundle() (key, chain []byte, err error) {
	switch r.phase {
	case phaseFresh, phaseWaitRefresh:
		return r.key, r.chain, nil
	case phaseDenied:
		return nil, nil, fmt.Errorf(msgDenied, r.reason, r.message)
	case phaseFailed:
		return nil, nil, fmt.Errorf(msgFailed, r.reason, r.message)
	}
	return nil, nil, ErrNotIssued
}
