package podsource

import corev1 "k8s.io/api/core/v1"

// Op is the kind of a pod update, as the upstream kubelet's config merger
// emits them.
type Op int

const (
	// OpAdd: pods new to berth.
	OpAdd Op = iota
	// OpUpdate: pods whose spec, labels or annotations changed.
	OpUpdate
	// OpRemove: pods a source no longer has; berth kills them.
	OpRemove
	// OpDelete: pods marked for graceful deletion (deletionTimestamp set).
	OpDelete
	// OpReconcile: pods whose status alone changed in the source.
	OpReconcile
)

func (o Op) String() string {
	switch o {
	case OpAdd:
		return "ADD"
	case OpUpdate:
		return "UPDATE"
	case OpRemove:
		return "REMOVE"
	case OpDelete:
		return "DELETE"
	case OpReconcile:
		return "RECONCILE"
	}
	return "UNKNOWN"
}

// Update is one incremental change from the merger: the pods it names and
// what happened to them. The merger owns the pods it sends; receivers must
// not mutate them (DeepCopy first).
type Update struct {
	Op     Op
	Source string
	Pods   []*corev1.Pod
}
