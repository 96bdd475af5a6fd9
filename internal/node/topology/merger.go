package topology

import "sort"

// merger holds what upstream's HintMerger compares hints with.
type merger struct {
	policy                Policy
	bestNonPreferredCount int
}

// compareMasks picks, of two preferred (or equally placed) hints, the
// narrower, or with prefer-closest-numa-nodes (not for single-numa-node)
// the closer.
func (m merger) compareMasks(current, candidate *Hint) *Hint {
	if candidate.Affinity == current.Affinity {
		return current
	}
	var best Mask
	if m.policy.Name != PolicySingleNUMANode && m.policy.Options.PreferClosestNUMA {
		best = m.policy.NUMA.closest(current.Affinity, candidate.Affinity)
	} else {
		best = narrowest(current.Affinity, candidate.Affinity)
	}
	if best == current.Affinity {
		return current
	}
	return candidate
}

// compare is upstream's HintMerger.compare, rule for rule: preferred hints
// win; of non-preferred ones, those of the width bestNonPreferredCount,
// then the widest below it, then the narrowest above it.
func (m merger) compare(current, candidate *Hint) *Hint {
	n := m.bestNonPreferredCount
	switch {
	case candidate.Affinity.Count() == 0:
		return current
	case current == nil:
		return candidate
	case !current.Preferred && candidate.Preferred:
		return candidate
	case current.Preferred && !candidate.Preferred:
		return current
	case current.Preferred && candidate.Preferred:
		return m.compareMasks(current, candidate)
	case current.Affinity.Count() > n:
		return m.compareMasks(current, candidate)
	case current.Affinity.Count() == n:
		if candidate.Affinity.Count() != n {
			return current
		}
		return m.compareMasks(current, candidate)
	case candidate.Affinity.Count() > n:
		return current
	case candidate.Affinity.Count() == n:
		return candidate
	case candidate.Affinity.Count() > current.Affinity.Count():
		return candidate
	case candidate.Affinity.Count() < current.Affinity.Count():
		return current
	}
	return m.compareMasks(current, candidate)
}

func sortedKeys(m ProviderHints) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
