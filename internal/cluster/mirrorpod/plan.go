package mirrorpod

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// Action is what to do with a static pod's mirror pod.
type Action int

const (
	// None: the mirror pod is right, or must be left alone for now.
	None Action = iota
	// Create: the static pod has no mirror pod yet.
	Create
	// Delete: the mirror pod's static pod is gone.
	Delete
	// Recreate: the mirror pod is outdated (another config hash) or being
	// deleted. Delete it (UID precondition), then create a new one; the
	// creation may fail while the old one is still there and is retried
	// on a later sync.
	Recreate
)

func (a Action) String() string {
	switch a {
	case None:
		return "None"
	case Create:
		return "Create"
	case Delete:
		return "Delete"
	case Recreate:
		return "Recreate"
	}
	return "Action(?)"
}

// Plan decides what to do with the mirror pod of a static pod.
//
// static is the static pod a source wants, or nil when no source wants a
// pod of the mirror's name any more. mirror is the API server's mirror pod
// of that name, or nil. staticTerminating reports that the pod worker is
// still stopping a pod of that name (the static pod was removed or
// replaced and its containers are not all stopped yet).
//
//	static  mirror                        terminating  action
//	nil     nil                           -            None
//	nil     present                       yes          None (wait until stopped)
//	nil     present                       no           Delete
//	set     -                             yes          None (upstream syncs no mirror while terminating)
//	set     nil                           no           Create
//	set     being deleted / other hash    no           Recreate
//	set     IsMirrorOf(mirror, static)    no           None
func Plan(static, mirror *corev1.Pod, staticTerminating bool) Action {
	switch {
	case static == nil && mirror == nil:
		return None
	case static == nil:
		if staticTerminating {
			return None
		}
		return Delete
	case staticTerminating:
		return None
	case mirror == nil:
		return Create
	case mirror.DeletionTimestamp != nil || !IsMirrorOf(mirror, static):
		return Recreate
	}
	return None
}

// IsMirrorOf reports whether mirror is the current mirror pod of static:
// same name and namespace, and a kubernetes.io/config.mirror annotation
// equal to the static pod's kubernetes.io/config.hash.
func IsMirrorOf(mirror, static *corev1.Pod) bool {
	if mirror == nil || static == nil || mirror.Name != static.Name || mirror.Namespace != static.Namespace {
		return false
	}
	hash, ok := mirror.Annotations[podutil.ConfigMirrorAnnotation]
	return ok && hash == configHash(static)
}

// configHash is the static pod's config hash, which the sources set to its
// UID.
func configHash(static *corev1.Pod) string {
	if h, ok := static.Annotations[podutil.ConfigHashAnnotation]; ok {
		return h
	}
	return string(static.UID)
}
