package syncloop

import (
	"maps"
	"slices"
	"sort"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Desired is the sync loop's read-only view of the desired pods and of the
// mirror pods the API source has. The wiring builds it first and hands the
// same value to the loop (Config.Desired), which publishes a new snapshot
// after every change, and to every reader, which loads the latest; so no
// reader needs the loop itself, nor waits for it to be built.
//
// Safe for concurrent use. The pods are shared: callers must not mutate
// them.
type Desired struct {
	snap atomic.Pointer[desiredSnapshot]
}

// desiredSnapshot is one published view; never changed once stored.
type desiredSnapshot struct {
	pods    []*corev1.Pod // sorted by namespace and name
	byUID   map[types.UID]*corev1.Pod
	mirrors map[string]*corev1.Pod // by full name (name_namespace)
}

// NewDesired returns an empty view: no pod desired yet.
func NewDesired() *Desired {
	d := &Desired{}
	d.publish(nil, nil)
	return d
}

// Pods returns the desired pods, sorted by namespace and name.
func (d *Desired) Pods() []*corev1.Pod { return d.snap.Load().pods }

// Pod returns the desired pod with the given UID, if any.
func (d *Desired) Pod(uid types.UID) (*corev1.Pod, bool) {
	p, ok := d.snap.Load().byUID[uid]
	return p, ok
}

// Has reports whether the pod with the given UID is desired.
func (d *Desired) Has(uid types.UID) bool {
	_, ok := d.Pod(uid)
	return ok
}

// MirrorPod returns the mirror pod of the static pod with the given full
// name (name_namespace), if the API source has one.
func (d *Desired) MirrorPod(fullName string) (*corev1.Pod, bool) {
	p, ok := d.snap.Load().mirrors[fullName]
	return p, ok
}

// MirrorPods returns the mirror pods the API source has, in no order.
func (d *Desired) MirrorPods() []*corev1.Pod {
	return slices.Collect(maps.Values(d.snap.Load().mirrors))
}

// publish stores a snapshot of pods and mirrors, which the caller keeps
// owning (they are copied).
func (d *Desired) publish(pods map[types.UID]*corev1.Pod, mirrors map[string]*corev1.Pod) {
	s := &desiredSnapshot{pods: make([]*corev1.Pod, 0, len(pods)), byUID: maps.Clone(pods), mirrors: maps.Clone(mirrors)}
	if s.byUID == nil {
		s.byUID = map[types.UID]*corev1.Pod{}
	}
	if s.mirrors == nil {
		s.mirrors = map[string]*corev1.Pod{}
	}
	for _, p := range pods {
		s.pods = append(s.pods, p)
	}
	sort.Slice(s.pods, func(i, j int) bool {
		if s.pods[i].Namespace != s.pods[j].Namespace {
			return s.pods[i].Namespace < s.pods[j].Namespace
		}
		return s.pods[i].Name < s.pods[j].Name
	})
	d.snap.Store(s)
}
