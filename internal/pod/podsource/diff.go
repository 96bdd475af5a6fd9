package podsource

import (
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// podSet is the pods one source last gave, by UID.
type podSet map[types.UID]*corev1.Pod

// diffResult is what a source's new pod set means against the stored one.
type diffResult struct {
	// next is the source's stored state after the change.
	next podSet
	// The pods of each kind of change, in the snapshot's order (removes in
	// full-name order).
	removes, adds, updates, deletes, reconciles []*corev1.Pod
	// duplicates are pods dropped because an earlier pod in the same
	// snapshot has the same full name or UID.
	duplicates []*corev1.Pod
	// refused are pods dropped because their UID fails
	// podutil.ValidateUID, with the reason.
	refused []refusal
}

// refusal is a pod the merger will not pass on, and why.
type refusal struct {
	pod *corev1.Pod
	err error
}

// diffPods compares a source's stored pods with the full set it now gives,
// as upstream's podStorage.merge does:
//   - a pod whose UID fails podutil.ValidateUID is refused, whatever its
//     source: no other part of berth ever sees it, so no such UID becomes
//     a path;
//   - a new UID is an add; it gets the source annotation and, unless it has
//     one, a config.seen of now;
//   - a known UID whose spec, labels, annotations (but berth's local ones),
//     deletionTimestamp or deletionGracePeriodSeconds changed is an update,
//     or a delete when its deletionTimestamp is set; it keeps the stored
//     local annotations (so config.seen is the first time seen);
//   - a known UID whose status alone changed is a reconcile;
//   - a stored UID the source no longer gives is a remove.
//
// A pod of incoming that is the very pod stored in old (the same pointer:
// applyUpdate passes the pods an incremental change did not touch) is
// unchanged and costs no comparison.
//
// It is pure apart from taking ownership of incoming: those pods become the
// stored state and may be changed. old is not changed.
func diffPods(source string, old podSet, incoming []*corev1.Pod, now time.Time) diffResult {
	r := diffResult{next: make(podSet, len(incoming))}
	names := make(map[string]bool, len(incoming))
	for _, ref := range incoming {
		if err := podutil.ValidateUID(ref.UID); err != nil {
			r.refused = append(r.refused, refusal{pod: ref, err: err})
			continue
		}
		fullName := podutil.FullName(ref)
		if names[fullName] || r.next[ref.UID] != nil {
			r.duplicates = append(r.duplicates, ref)
			continue
		}
		names[fullName] = true
		if existing, found := old[ref.UID]; found && existing == ref {
			r.next[ref.UID] = existing
			continue
		}
		if ref.Annotations == nil {
			ref.Annotations = map[string]string{}
		}
		ref.Annotations[podutil.ConfigSourceAnnotation] = source
		existing, found := old[ref.UID]
		if !found {
			if _, ok := ref.Annotations[podutil.ConfigSeenAnnotation]; !ok {
				ref.Annotations[podutil.ConfigSeenAnnotation] = now.UTC().Format(time.RFC3339Nano)
			}
			r.next[ref.UID] = ref
			r.adds = append(r.adds, ref)
			continue
		}
		if !podsDifferSemantically(existing, ref) {
			stored := existing
			if !equality.Semantic.DeepEqual(existing.Status, ref.Status) {
				stored = existing.DeepCopy()
				stored.Status = ref.Status
				r.reconciles = append(r.reconciles, stored)
			}
			r.next[ref.UID] = stored
			continue
		}
		keepLocalAnnotations(existing, ref)
		r.next[ref.UID] = ref
		if ref.DeletionTimestamp != nil {
			r.deletes = append(r.deletes, ref)
		} else {
			r.updates = append(r.updates, ref)
		}
	}
	for uid, pod := range old {
		if _, ok := r.next[uid]; !ok {
			r.removes = append(r.removes, pod)
		}
	}
	sort.Slice(r.removes, func(i, j int) bool { return podutil.FullName(r.removes[i]) < podutil.FullName(r.removes[j]) })
	return r
}

// toUpdates orders the result as upstream's incremental mode sends it:
// removes, adds, updates, deletes, then reconciles. The first snapshot of a
// source that adds, updates and deletes nothing still yields an empty
// OpAdd, so consumers learn the source is ready. Pods are deep copies.
func (r diffResult) toUpdates(source string, first bool) []Update {
	var out []Update
	for _, g := range []struct {
		op   Op
		pods []*corev1.Pod
	}{{OpRemove, r.removes}, {OpAdd, r.adds}, {OpUpdate, r.updates}, {OpDelete, r.deletes}} {
		if len(g.pods) > 0 {
			out = append(out, Update{Op: g.op, Source: source, Pods: deepCopyPods(g.pods)})
		}
	}
	if first && len(r.adds)+len(r.updates)+len(r.deletes) == 0 {
		out = append(out, Update{Op: OpAdd, Source: source, Pods: []*corev1.Pod{}})
	}
	if len(r.reconciles) > 0 {
		out = append(out, Update{Op: OpReconcile, Source: source, Pods: deepCopyPods(r.reconciles)})
	}
	return out
}

// podsDifferSemantically reports whether anything berth acts on changed:
// spec, labels, deletion fields, or annotations other than berth's own.
func podsDifferSemantically(existing, ref *corev1.Pod) bool {
	return !equality.Semantic.DeepEqual(existing.Spec, ref.Spec) ||
		!equality.Semantic.DeepEqual(existing.Labels, ref.Labels) ||
		!equality.Semantic.DeepEqual(existing.DeletionTimestamp, ref.DeletionTimestamp) ||
		!equality.Semantic.DeepEqual(existing.DeletionGracePeriodSeconds, ref.DeletionGracePeriodSeconds) ||
		!annotationsEqualIgnoringLocal(existing.Annotations, ref.Annotations)
}

func annotationsEqualIgnoringLocal(a, b map[string]string) bool {
	count := func(m map[string]string) int {
		n := len(m)
		for _, k := range localAnnotations {
			if _, ok := m[k]; ok {
				n--
			}
		}
		return n
	}
	if count(a) != count(b) {
		return false
	}
	for k, v := range a {
		if isLocalAnnotation(k) {
			continue
		}
		if bv, ok := b[k]; !ok || bv != v {
			return false
		}
	}
	return true
}

func isLocalAnnotation(key string) bool {
	for _, k := range localAnnotations {
		if k == key {
			return true
		}
	}
	return false
}

// keepLocalAnnotations copies berth's own annotations from existing onto ref.
func keepLocalAnnotations(existing, ref *corev1.Pod) {
	for _, k := range localAnnotations {
		if v, ok := existing.Annotations[k]; ok {
			ref.Annotations[k] = v
		}
	}
}

// applyUpdate turns an incremental Update into the source's full new pod
// set: adds, updates, deletes and reconciles replace the pod with the same
// UID, removes drop it. The result is in full-name order. The pods u
// brings are copies; the others are old's own pods, which diffPods
// recognises as unchanged, so a change of one pod costs one comparison
// and one copy, not one per pod of the source.
func applyUpdate(old podSet, u Update) []*corev1.Pod {
	next := make(podSet, len(old)+len(u.Pods))
	for uid, pod := range old {
		next[uid] = pod
	}
	for _, pod := range u.Pods {
		if u.Op == OpRemove {
			delete(next, pod.UID)
		} else {
			next[pod.UID] = pod.DeepCopy()
		}
	}
	type named struct {
		name string
		pod  *corev1.Pod
	}
	byName := make([]named, 0, len(next))
	for _, pod := range next {
		byName = append(byName, named{podutil.FullName(pod), pod})
	}
	sort.Slice(byName, func(i, j int) bool { return byName[i].name < byName[j].name })
	pods := make([]*corev1.Pod, len(byName))
	for i, n := range byName {
		pods[i] = n.pod
	}
	return pods
}

func deepCopyPods(pods []*corev1.Pod) []*corev1.Pod {
	out := make([]*corev1.Pod, len(pods))
	for i, p := range pods {
		out[i] = p.DeepCopy()
	}
	return out
}
