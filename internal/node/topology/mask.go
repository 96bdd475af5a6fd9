package topology

import (
	"fmt"
	"math/bits"
)

// Mask is a set of NUMA node IDs (0-63), upstream's bitmask.BitMask as a
// value. The zero Mask, in a Hint, is upstream's nil affinity: no
// preference.
type Mask uint64

// NewMask returns the mask of the given NUMA nodes.
func NewMask(nodes ...int) (Mask, error) {
	var m Mask
	for _, n := range nodes {
		if n < 0 || n >= 64 {
			return 0, fmt.Errorf("bit number must be in range 0-63")
		}
		m |= 1 << uint(n)
	}
	return m, nil
}

// MustMask is NewMask for nodes known to be in range (tests, constants).
func MustMask(nodes ...int) Mask {
	m, err := NewMask(nodes...)
	if err != nil {
		panic(err)
	}
	return m
}

// Count is the number of NUMA nodes in m.
func (m Mask) Count() int { return bits.OnesCount64(uint64(m)) }

// IsSet reports whether node n is in m.
func (m Mask) IsSet(n int) bool { return n >= 0 && n < 64 && m&(1<<uint(n)) != 0 }

// Bits returns m's NUMA nodes in ascending order.
func (m Mask) Bits() []int {
	var out []int
	for i := 0; i < 64; i++ {
		if m.IsSet(i) {
			out = append(out, i)
		}
	}
	return out
}

// IsNarrowerThan is upstream's: fewer nodes, or as many and a lower value.
func (m Mask) IsNarrowerThan(o Mask) bool {
	if m.Count() == o.Count() {
		return m < o
	}
	return m.Count() < o.Count()
}

// iterateMasks calls f with every non-empty subset of nodes, smallest
// subsets first, as upstream's bitmask.IterateBitMasks.
func iterateMasks(nodes []int, f func(Mask)) {
	var iterate func(rest []int, accum Mask, size int)
	iterate = func(rest []int, accum Mask, size int) {
		if accum.Count() == size {
			f(accum)
			return
		}
		for i := range rest {
			iterate(rest[i+1:], accum|1<<uint(rest[i]), size)
		}
	}
	for size := 1; size <= len(nodes); size++ {
		iterate(nodes, 0, size)
	}
}

// IterateMasks is iterateMasks for hint providers.
func IterateMasks(nodes []int, f func(Mask)) { iterateMasks(nodes, f) }

// Hint is upstream's TopologyHint: the NUMA nodes a resource can be given
// from (zero: any) and whether that set is a preferred one (as narrow as
// the request allows).
type Hint struct {
	Affinity  Mask
	Preferred bool
}

// String shows the hint the way logs and tests want it.
func (h Hint) String() string {
	return fmt.Sprintf("{%v %t}", h.Affinity.Bits(), h.Preferred)
}
