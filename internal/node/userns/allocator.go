package userns

import (
	"errors"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/types"
)

// unitLength is the granularity of user namespace ranges: idsPerPod and
// the kubelet's range are multiples of it (upstream userNsUnitLength).
const unitLength = 65536

// DefaultIDsPerPod is the IDs each pod's user namespace maps when
// userNamespaces.idsPerPod is unset (upstream
// DefaultKubeletUserNamespacesIDsPerPod).
const DefaultIDsPerPod = 65536

// Range is a range of host IDs: Length IDs from First.
type Range struct {
	First, Length uint32
}

// DefaultRange is the range pods' user namespaces come from when the
// kubelet user has no subordinate IDs: every ID from idsPerPod up, as
// upstream (IDs below idsPerPod, root's among them, are never mapped).
func DefaultRange(idsPerPod uint32) Range {
	return Range{First: idsPerPod, Length: uint32((1 << 32) - uint64(idsPerPod))}
}

// Mapping is one pod's user namespace: container IDs 0 to Length-1 are
// host IDs HostID to HostID+Length-1, for users and groups alike.
type Mapping struct {
	HostID, Length uint32
}

// Allocator hands out non-overlapping Mappings of idsPerPod IDs from the
// kubelet's range, one per pod, as upstream's UsernsManager does: the
// range is cut into slots of idsPerPod IDs and each pod holds one slot.
// It is pure: no files, no clock; randomness comes in as a function.
//
// An Allocator is not safe for concurrent use: its owner (Manager) guards
// it with its mutex.
type Allocator struct {
	size uint32 // IDs per pod
	off  int    // the slot of the range's first ID
	n    int    // slots in the range
	// slots maps a taken slot to its pod; pods a pod to its slot.
	slots map[int]types.UID
	pods  map[types.UID]int
}

// NewAllocator returns an Allocator over the kubelet's range r for pods
// of idsPerPod IDs, refusing what upstream's MakeUserNsManager refuses
// (with its messages): a length that is not a multiple of 65536, a range
// not aligned on idsPerPod, one that would map IDs below idsPerPod, or
// one too small for maxPods pods; and, where upstream does not check, one
// that goes past the last 32-bit ID.
func NewAllocator(r Range, idsPerPod uint32, maxPods int) (*Allocator, error) {
	switch {
	case idsPerPod == 0 || idsPerPod%unitLength != 0:
		return nil, fmt.Errorf("kubelet user namespace length %v is not a multiple of %d", idsPerPod, unitLength)
	case r.First%idsPerPod != 0:
		return nil, fmt.Errorf("kubelet user assigned ID %v is not a multiple of %v", r.First, idsPerPod)
	case r.First < idsPerPod:
		// Mapping 0 would circumvent the isolation.
		return nil, fmt.Errorf("kubelet user assigned ID %v must be greater or equal to %v", r.First, idsPerPod)
	case uint64(r.First)+uint64(r.Length) > 1<<32:
		// A slot past the last ID would wrap: its mapping would start at
		// host ID 0 (issue #26, finding 4). Upstream does not check.
		return nil, fmt.Errorf("kubelet user assigned IDs %v to %v go past the last ID, %v: a pod's IDs would wrap to host ID 0",
			r.First, uint64(r.First)+uint64(r.Length)-1, uint32(1<<32-1))
	case r.Length%idsPerPod != 0:
		return nil, fmt.Errorf("kubelet user assigned IDs length %v is not a multiple of %v", r.Length, idsPerPod)
	case r.Length/idsPerPod < uint32(max(maxPods, 0)):
		return nil, fmt.Errorf("kubelet user assigned IDs are not enough to support %v pods", maxPods)
	}
	return &Allocator{
		size:  idsPerPod,
		off:   int(r.First / idsPerPod),
		n:     int(r.Length / idsPerPod),
		slots: map[int]types.UID{},
		pods:  map[types.UID]int{},
	}, nil
}

// errFull is returned when every slot is taken.
var errFull = errors.New("could not find an empty slot to allocate a user namespace")

// Allocate gives the pod a free slot: pick(n) returns the slot, in [0, n),
// the search starts from, and the first free one from there (wrapping
// around) is taken, as upstream's random scan. A pod that holds a slot
// keeps it.
func (a *Allocator) Allocate(uid types.UID, pick func(n int) int) (Mapping, error) {
	if m, ok := a.Get(uid); ok {
		return m, nil
	}
	if len(a.slots) >= a.n {
		return Mapping{}, errFull
	}
	start := pick(a.n)
	for i := range a.n {
		slot := (start + i) % a.n
		if _, taken := a.slots[slot]; !taken {
			a.slots[slot], a.pods[uid] = uid, slot
			return a.mapping(slot), nil
		}
	}
	return Mapping{}, errFull
}

// Record marks m as the pod's, as read back from the pod's directory. It
// refuses what upstream's record refuses: a mapping of another length,
// one not on a slot boundary or outside the range, another mapping than
// the one the pod holds, and a slot another pod holds.
func (a *Allocator) Record(uid types.UID, m Mapping) error {
	if m.Length != a.size {
		return fmt.Errorf("wrong user namespace length %v", m.Length)
	}
	if m.HostID%a.size != 0 {
		return fmt.Errorf("wrong user namespace offset specified %v", m.HostID)
	}
	slot := int(m.HostID/a.size) - a.off
	if prev, ok := a.pods[uid]; ok {
		if prev != slot {
			return fmt.Errorf("different user namespace range already used by pod %q", uid)
		}
		return nil
	}
	if slot < 0 || slot >= a.n {
		return fmt.Errorf("id %v is out of range", m.HostID)
	}
	if _, taken := a.slots[slot]; taken {
		return fmt.Errorf("range picked for pod %q already taken", uid)
	}
	a.slots[slot], a.pods[uid] = uid, slot
	return nil
}

// Release frees the pod's slot and reports whether it held one.
func (a *Allocator) Release(uid types.UID) bool {
	slot, ok := a.pods[uid]
	if !ok {
		return false
	}
	delete(a.pods, uid)
	delete(a.slots, slot)
	return true
}

// Get returns the pod's mapping, if it holds one.
func (a *Allocator) Get(uid types.UID) (Mapping, bool) {
	slot, ok := a.pods[uid]
	if !ok {
		return Mapping{}, false
	}
	return a.mapping(slot), true
}

// Pods lists the pods holding a slot, sorted.
func (a *Allocator) Pods() []types.UID {
	out := make([]types.UID, 0, len(a.pods))
	for uid := range a.pods {
		out = append(out, uid)
	}
	slices.Sort(out)
	return out
}

func (a *Allocator) mapping(slot int) Mapping {
	return Mapping{HostID: uint32(slot+a.off) * a.size, Length: a.size}
}
