package topology

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func h(preferred bool, nodes ...int) Hint {
	return Hint{Affinity: MustMask(nodes...), Preferred: preferred}
}

func fourNodes() *NUMAInfo {
	return &NUMAInfo{Nodes: []int{0, 1, 2, 3}, Distances: map[int][]uint64{
		0: {10, 11, 12, 12}, 1: {11, 10, 12, 12}, 2: {12, 12, 10, 11}, 3: {12, 12, 11, 10},
	}}
}

func eightNodes() *NUMAInfo {
	return &NUMAInfo{Nodes: []int{0, 1, 2, 3, 4, 5, 6, 7}, Distances: map[int][]uint64{
		0: {10, 11, 12, 12, 30, 30, 30, 30}, 1: {11, 10, 12, 12, 30, 30, 30, 30},
		2: {12, 12, 10, 11, 30, 30, 30, 30}, 3: {12, 12, 11, 10, 30, 30, 30, 30},
		4: {30, 30, 30, 30, 10, 11, 12, 12}, 5: {30, 30, 30, 30, 11, 10, 12, 12},
		6: {30, 30, 30, 30, 12, 12, 10, 11}, 7: {30, 30, 30, 30, 12, 12, 13, 10},
	}}
}

type mergeCase struct {
	name      string
	providers []ProviderHints
	want      map[string]Hint // by policy name
	wantAdmit map[string]bool // by policy name; absent: true
}

// mergeCases are modelled on upstream's policy_test.go cases, on four NUMA
// nodes; want gives each policy's result where it matters.
var mergeCases = []mergeCase{
	{
		name: "no providers",
		want: map[string]Hint{PolicyBestEffort: h(true, 0, 1, 2, 3), PolicyRestricted: h(true, 0, 1, 2, 3), PolicySingleNUMANode: {Preferred: true}},
	},
	{
		name:      "provider with an empty map has no preference",
		providers: []ProviderHints{{}},
		want:      map[string]Hint{PolicyBestEffort: h(true, 0, 1, 2, 3), PolicyRestricted: h(true, 0, 1, 2, 3), PolicySingleNUMANode: {Preferred: true}},
	},
	{
		name:      "a resource with no possible affinity is not preferred",
		providers: []ProviderHints{{"resource": {}}},
		want:      map[string]Hint{PolicyBestEffort: h(false, 0, 1, 2, 3), PolicyRestricted: h(false, 0, 1, 2, 3), PolicySingleNUMANode: {}},
		wantAdmit: map[string]bool{PolicyRestricted: false, PolicySingleNUMANode: false},
	},
	{
		name: "two providers, same mask, both preferred",
		providers: []ProviderHints{
			{"resource1": {h(true, 0)}}, {"resource2": {h(true, 0)}},
		},
		want: map[string]Hint{PolicyBestEffort: h(true, 0), PolicyRestricted: h(true, 0), PolicySingleNUMANode: h(true, 0)},
	},
	{
		name: "two providers, no common mask",
		providers: []ProviderHints{
			{"resource1": {h(true, 0)}}, {"resource2": {h(true, 1)}},
		},
		want:      map[string]Hint{PolicyBestEffort: h(false, 0, 1, 2, 3), PolicyRestricted: h(false, 0, 1, 2, 3), PolicySingleNUMANode: {}},
		wantAdmit: map[string]bool{PolicyRestricted: false, PolicySingleNUMANode: false},
	},
	{
		name: "same mask, one not preferred",
		providers: []ProviderHints{
			{"resource1": {h(true, 0)}}, {"resource2": {h(false, 0)}},
		},
		want:      map[string]Hint{PolicyBestEffort: h(false, 0), PolicyRestricted: h(false, 0), PolicySingleNUMANode: {}},
		wantAdmit: map[string]bool{PolicyRestricted: false, PolicySingleNUMANode: false},
	},
	{
		name: "a preferred hint beats a narrower-or-equal non-preferred one",
		providers: []ProviderHints{
			{"resource1": {h(true, 1), h(false, 0, 1)}},
			{"resource2": {h(true, 0), h(true, 1), h(false, 0, 1)}},
		},
		want: map[string]Hint{PolicyBestEffort: h(true, 1), PolicyRestricted: h(true, 1), PolicySingleNUMANode: h(true, 1)},
	},
	{
		name: "multiple resources of one provider",
		providers: []ProviderHints{{
			"resource1": {h(true, 0), h(true, 1), h(false, 0, 1)},
			"resource2": {h(true, 0), h(true, 1), h(false, 0, 1)},
		}},
		want: map[string]Hint{PolicyBestEffort: h(true, 0), PolicyRestricted: h(true, 0), PolicySingleNUMANode: h(true, 0)},
	},
	{
		name: "bestNonPreferredAffinityCount (4)",
		providers: []ProviderHints{
			{"resource1": {h(false, 0, 1, 2, 3), h(false, 0, 1)}},
			{"resource2": {h(false, 2, 3)}},
		},
		want:      map[string]Hint{PolicyBestEffort: h(false, 2, 3), PolicyRestricted: h(false, 2, 3), PolicySingleNUMANode: {}},
		wantAdmit: map[string]bool{PolicyRestricted: false, PolicySingleNUMANode: false},
	},
	{
		name: "bestNonPreferredAffinityCount (5): narrowest of the best width",
		providers: []ProviderHints{
			{"resource1": {h(false, 0, 1, 2, 3), h(false, 0, 1)}},
			{"resource2": {h(false, 1, 2), h(false, 2, 3)}},
		},
		want:      map[string]Hint{PolicyBestEffort: h(false, 1, 2), PolicyRestricted: h(false, 1, 2), PolicySingleNUMANode: {}},
		wantAdmit: map[string]bool{PolicyRestricted: false, PolicySingleNUMANode: false},
	},
	{
		name:      "single NUMA hints only for single-numa-node",
		providers: []ProviderHints{{"resource": {h(true, 0, 1), h(true, 2)}}},
		want:      map[string]Hint{PolicyBestEffort: h(true, 2), PolicyRestricted: h(true, 2), PolicySingleNUMANode: h(true, 2)},
	},
	{
		name:      "a no-preference provider and a single-node one",
		providers: []ProviderHints{nil, {"resource": nil}, {"resource2": {h(true, 1)}}},
		want:      map[string]Hint{PolicyBestEffort: h(true, 1), PolicyRestricted: h(true, 1), PolicySingleNUMANode: h(true, 1)},
	},
}

func TestMerge(t *testing.T) {
	for _, name := range []string{PolicyBestEffort, PolicyRestricted, PolicySingleNUMANode} {
		p := Policy{Name: name, NUMA: fourNodes(), Options: Options{MaxAllowableNUMANodes: 8}}
		for _, tc := range mergeCases {
			t.Run(name+"/"+tc.name, func(t *testing.T) {
				got, admit := p.Merge(tc.providers)
				if d := cmp.Diff(tc.want[name], got); d != "" {
					t.Errorf("hint (-want +got):\n%s", d)
				}
				wantAdmit, ok := tc.wantAdmit[name]
				if !ok {
					wantAdmit = true
				}
				if admit != wantAdmit {
					t.Errorf("admit = %t, want %t", admit, wantAdmit)
				}
			})
		}
	}
}

func TestMergeNone(t *testing.T) {
	got, admit := Policy{Name: PolicyNone}.Merge([]ProviderHints{{"r": {}}})
	if got != (Hint{}) || !admit {
		t.Errorf("none: %v %t, want no affinity, admitted", got, admit)
	}
}

// TestMergeClosestNUMA is upstream's mergeTestCasesClosestNUMA on eight
// nodes: of two preferred masks as wide, the one of shorter distances.
func TestMergeClosestNUMA(t *testing.T) {
	for _, tc := range []struct {
		name      string
		closest   bool
		policy    string
		providers []ProviderHints
		want      Hint
	}{
		{name: "closest pair", closest: true, policy: PolicyBestEffort,
			providers: []ProviderHints{{"r1": {h(true, 0, 4), h(true, 0, 2)}}, {"r2": {h(true, 0, 4), h(true, 0, 2)}}},
			want:      h(true, 0, 2)},
		{name: "without the option, the lower mask", closest: false, policy: PolicyBestEffort,
			providers: []ProviderHints{{"r1": {h(true, 0, 4), h(true, 4, 5)}}, {"r2": {h(true, 0, 4), h(true, 4, 5)}}},
			want:      h(true, 0, 4)},
		{name: "with the option, the closer mask", closest: true, policy: PolicyRestricted,
			providers: []ProviderHints{{"r1": {h(true, 0, 4), h(true, 4, 5)}}, {"r2": {h(true, 0, 4), h(true, 4, 5)}}},
			want:      h(true, 4, 5)},
		{name: "narrower still wins", closest: true, policy: PolicyBestEffort,
			providers: []ProviderHints{{"r1": {h(true, 4), h(true, 0, 2)}}, {"r2": {h(true, 4), h(true, 0, 2)}}},
			want:      h(true, 4)},
		{name: "bestNonPreferredAffinityCount (5) with distances", closest: true, policy: PolicyBestEffort,
			providers: []ProviderHints{{"r1": {h(false, 0, 1, 2, 3), h(false, 0, 1)}}, {"r2": {h(false, 1, 2), h(false, 2, 3)}}},
			want:      h(false, 2, 3)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Policy{Name: tc.policy, NUMA: eightNodes(), Options: Options{PreferClosestNUMA: tc.closest, MaxAllowableNUMANodes: 8}}
			got, _ := p.Merge(tc.providers)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("hint (-want +got):\n%s", d)
			}
		})
	}
}
