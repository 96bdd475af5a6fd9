package topology

// Policy merges the hints of every hint provider into one, as upstream's
// best-effort, restricted, single-numa-node and none policies do. A Policy
// is a value and safe for concurrent use.
type Policy struct {
	Name    string
	NUMA    *NUMAInfo
	Options Options
}

// ProviderHints are one provider's hints, by resource. A nil map, or a
// resource with a nil list, means no preference; a resource with an empty
// non-nil list means no NUMA affinity can satisfy it.
type ProviderHints map[string][]Hint

// Merge returns the best hint of every combination of one hint per
// provider and resource, and whether the pod (or container) may be
// admitted with it: always with best-effort and none, only a preferred
// hint with restricted and single-numa-node. Pure.
func (p Policy) Merge(providers []ProviderHints) (Hint, bool) {
	switch p.Name {
	case PolicyNone, "":
		return Hint{}, true
	case PolicySingleNUMANode:
		best := p.merge(filterSingleNUMA(filterProvidersHints(providers)))
		if best.Affinity == p.NUMA.DefaultAffinity() {
			best = Hint{Preferred: best.Preferred}
		}
		return best, best.Preferred
	case PolicyRestricted:
		best := p.merge(filterProvidersHints(providers))
		return best, best.Preferred
	default:
		return p.merge(filterProvidersHints(providers)), true
	}
}

// filterProvidersHints is upstream's: one list of hints per provider and
// resource, "no preference" and "impossible" made explicit.
func filterProvidersHints(providers []ProviderHints) [][]Hint {
	var all [][]Hint
	for _, hints := range providers {
		if len(hints) == 0 {
			all = append(all, []Hint{{Preferred: true}})
			continue
		}
		for _, resource := range sortedKeys(hints) {
			switch h := hints[resource]; {
			case h == nil:
				all = append(all, []Hint{{Preferred: true}})
			case len(h) == 0:
				all = append(all, []Hint{{Preferred: false}})
			default:
				all = append(all, h)
			}
		}
	}
	return all
}

// filterSingleNUMA keeps the preferred hints of no preference or of one
// NUMA node, as upstream's filterSingleNumaHints.
func filterSingleNUMA(all [][]Hint) [][]Hint {
	out := make([][]Hint, 0, len(all))
	for _, hints := range all {
		var kept []Hint
		for _, h := range hints {
			if h.Preferred && (h.Affinity == 0 || h.Affinity.Count() == 1) {
				kept = append(kept, h)
			}
		}
		out = append(out, kept)
	}
	return out
}

// merge is upstream's HintMerger.Merge: every permutation merged, the best
// kept; the default affinity, not preferred, when none has any node.
func (p Policy) merge(all [][]Hint) Hint {
	m := merger{policy: p, bestNonPreferredCount: maxOfMinAffinityCounts(all)}
	def := p.NUMA.DefaultAffinity()
	var best *Hint
	iteratePermutations(all, func(perm []Hint) {
		merged := mergePermutation(def, perm)
		best = m.compare(best, &merged)
	})
	if best == nil {
		return Hint{Affinity: def}
	}
	return *best
}

// mergePermutation ANDs the affinities of one hint per resource into the
// default affinity; the result is preferred only if every hint is and all
// name the same nodes.
func mergePermutation(def Mask, perm []Hint) Hint {
	preferred := true
	merged := def
	var first Mask
	for _, h := range perm {
		if h.Affinity != 0 {
			if first == 0 {
				first = h.Affinity
			} else if h.Affinity != first {
				preferred = false
			}
			merged &= h.Affinity
		}
		if !h.Preferred {
			preferred = false
		}
	}
	return Hint{Affinity: merged, Preferred: preferred}
}

func iteratePermutations(all [][]Hint, f func([]Hint)) {
	var iterate func(i int, accum []Hint)
	iterate = func(i int, accum []Hint) {
		if i == len(all) {
			f(accum)
			return
		}
		for _, h := range all[i] {
			iterate(i+1, append(accum, h))
		}
	}
	iterate(0, nil)
}

// maxOfMinAffinityCounts is upstream's: the widest of each resource's
// narrowest hint, the width a non-preferred result should aim at.
func maxOfMinAffinityCounts(all [][]Hint) int {
	maxOfMin := 0
	for _, hints := range all {
		var narrowestHint Mask
		for _, h := range hints {
			if h.Affinity == 0 {
				continue
			}
			if narrowestHint == 0 || h.Affinity.IsNarrowerThan(narrowestHint) {
				narrowestHint = h.Affinity
			}
		}
		if c := narrowestHint.Count(); c > maxOfMin {
			maxOfMin = c
		}
	}
	return maxOfMin
}
