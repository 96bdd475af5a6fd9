package transient

import (
	"context"
	"errors"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/berthk8s/berth/internal/platform/cri"
	"github.com/berthk8s/berth/internal/volumes/objectcache"
	"github.com/berthk8s/berth/internal/volumes/podcert"
)

// ForbiddenWindow is how long after the node first sees a pod a forbidden
// answer about it (a TokenRequest of its service account, a read of a
// configMap it references) counts as the node authorizer not knowing the
// pod yet, and a TokenRequest's "pod not found" as the API server not
// seeing the new pod yet. The authorizer's graph follows pod bindings
// within a second or two; after the window such an answer is final.
const ForbiddenWindow = 30 * time.Second

// Recent reports whether a pod first seen at seen is still within
// ForbiddenWindow at now.
func Recent(seen, now time.Time) bool {
	return !seen.IsZero() && now.Sub(seen) < ForbiddenWindow
}

// notFoundKind is the kind (resource) a NotFound status names.
func notFoundKind(err error) string {
	var st apierrors.APIStatus
	if !errors.As(err, &st) || st.Status().Details == nil {
		return ""
	}
	return st.Status().Details.Kind
}

// waiting marks an error that reports a wait on another part of the
// cluster (Waiting).
type waiting struct{ error }

func (w waiting) Unwrap() error { return w.error }

// WaitWindow is how long after the node first sees a pod a claim of it
// that is missing or not bound yet counts as a wait (Waiting): about
// upstream's bound on a pod sync's wait for its volumes (2m3s), long
// enough for a cloud provisioner to create a disk.
const WaitWindow = 2 * time.Minute

// Waiting marks err, unchanged in its message, as a wait on another part
// of the cluster that ends on its own: a claim the PV controller or a
// provisioner has not bound yet, a generic ephemeral volume's claim the
// ephemeral controller has not created yet. Is reports it transient and
// IsWaiting reports it, whatever the pod's age: the pod worker polls it
// (podworker.Config.Waiting), as upstream's volume manager polls such a
// claim, instead of waiting out its full back-off for a claim bound a
// second later. The caller decides that the wait is one (WaitWindow): a
// claim missing long after the pod appeared is a mistake, not a wait.
func Waiting(err error) error {
	if err == nil {
		return nil
	}
	return waiting{err}
}

// IsWaiting reports whether err is, or joins, a wait (Waiting) and was not
// cancelled. It is pure.
func IsWaiting(err error) bool {
	return !errors.Is(err, context.Canceled) && errors.As(err, new(waiting))
}

// Is reports whether err is expected to clear on its own within seconds.
// recent says the pod concerned was first seen within ForbiddenWindow
// (Recent), which makes a forbidden answer transient. It is pure.
func Is(err error, recent bool) bool {
	switch {
	case err == nil:
		return false
	case errors.Is(err, context.Canceled):
		return false
	case errors.As(err, new(waiting)):
		return true
	case apierrors.IsForbidden(err):
		return recent
	case apierrors.IsNotFound(err):
		// Right after a pod was created: the pod a token is bound to, not
		// found by the API server yet (its storage says "pods", the
		// NodeRestriction admission plugin's informer, which lags it,
		// "pod"), and a configMap or secret created
		// together with the pod (one kubectl apply; kube-root-ca.crt, which
		// kube-controller-manager publishes into a new namespace moments
		// after it exists). A missing service account, or anything missing
		// after the window, stays missing until someone creates it.
		switch notFoundKind(err) {
		case "pods", "pod", "configmaps", "secrets":
			return recent
		}
		return false
	case apierrors.IsTooManyRequests(err), apierrors.IsServiceUnavailable(err),
		apierrors.IsInternalError(err), apierrors.IsServerTimeout(err), apierrors.IsTimeout(err):
		return true
	case errors.Is(err, objectcache.ErrNotSynced):
		return true
	case errors.Is(err, podcert.ErrNotIssued):
		// A podCertificate's request the signer has not answered yet.
		return true
	case errors.Is(err, cri.ErrDeadlineExceeded), errors.Is(err, cri.ErrUnavailable):
		return true
	case errors.Is(err, cri.ErrInProgress):
		// A sandbox's or container's creation, start or removal still in
		// progress in the runtime, asked for before berth restarted or by a
		// call that timed out: it ends within seconds, and the pod then
		// syncs past it.
		return true
	}
	return false
}
