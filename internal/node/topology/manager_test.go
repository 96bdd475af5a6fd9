package topology

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

// fakeProvider gives fixed hints by container name ("" for the pod) and
// records what it was asked to allocate.
type fakeProvider struct {
	hints     map[string]ProviderHints
	failOn    string
	allocated []string
}

func (f *fakeProvider) TopologyHints(_ context.Context, _ *corev1.Pod, c *corev1.Container) ProviderHints {
	return f.hints[c.Name]
}

func (f *fakeProvider) PodTopologyHints(context.Context, *corev1.Pod) ProviderHints {
	return f.hints[""]
}

func (f *fakeProvider) Allocate(_ context.Context, _ *corev1.Pod, c *corev1.Container, h Hint) error {
	if c.Name == f.failOn {
		return errors.New("no CPUs")
	}
	f.allocated = append(f.allocated, c.Name+h.String())
	return nil
}

func (f *fakeProvider) AdmitError(err error) (string, string) {
	return "UnexpectedAdmissionError", err.Error()
}

func TestManagerAdmit(t *testing.T) {
	twoNodes := &NUMAInfo{Nodes: []int{0, 1}}
	pd := &corev1.Pod{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "init"}},
		Containers:     []corev1.Container{{Name: "a"}, {Name: "b"}},
	}}
	for _, tt := range []struct {
		name, policy, scope string
		hints               map[string]ProviderHints
		failOn              string
		wantOK              bool
		wantReason          string
		wantAllocated       []string
	}{
		{name: "none: no preference for each container", policy: PolicyNone, scope: ScopeContainer,
			hints: map[string]ProviderHints{"a": {"cpu": {}}}, wantOK: true,
			wantAllocated: []string{"init{[] false}", "a{[] false}", "b{[] false}"}},
		{name: "container scope: each its own hint", policy: PolicyRestricted, scope: ScopeContainer,
			hints:  map[string]ProviderHints{"a": {"cpu": {h(true, 1), h(false, 0, 1)}}, "b": {"cpu": {h(true, 0)}}},
			wantOK: true, wantAllocated: []string{"init{[0 1] true}", "a{[1] true}", "b{[0] true}"}},
		{name: "container scope: refused at the container that cannot align", policy: PolicyRestricted, scope: ScopeContainer,
			hints:  map[string]ProviderHints{"b": {"cpu": {h(false, 0, 1)}}},
			wantOK: false, wantReason: ReasonTopologyAffinity, wantAllocated: []string{"init{[0 1] true}", "a{[0 1] true}"}},
		{name: "pod scope: one hint for all", policy: PolicySingleNUMANode, scope: ScopePod,
			hints:  map[string]ProviderHints{"": {"cpu": {h(true, 1), h(false, 0, 1)}}, "a": {"cpu": {}}},
			wantOK: true, wantAllocated: []string{"init{[1] true}", "a{[1] true}", "b{[1] true}"}},
		{name: "pod scope: refused before any allocation", policy: PolicySingleNUMANode, scope: ScopePod,
			hints:  map[string]ProviderHints{"": {"cpu": {h(true, 0, 1)}}},
			wantOK: false, wantReason: ReasonTopologyAffinity},
		{name: "best-effort admits what it cannot align", policy: PolicyBestEffort, scope: ScopePod,
			hints:  map[string]ProviderHints{"": {"cpu": {}}},
			wantOK: true, wantAllocated: []string{"init{[0 1] false}", "a{[0 1] false}", "b{[0 1] false}"}},
		{name: "an allocation error is the provider's reason", policy: PolicyBestEffort, scope: ScopeContainer,
			failOn: "a", wantOK: false, wantReason: "UnexpectedAdmissionError", wantAllocated: []string{"init{[0 1] true}"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := &fakeProvider{hints: tt.hints, failOn: tt.failOn}
			m, err := New(Config{Policy: tt.policy, Scope: tt.scope, Options: Options{MaxAllowableNUMANodes: 8}, NUMA: twoNodes, Providers: []HintProvider{p}})
			if err != nil {
				t.Fatal(err)
			}
			ok, reason, _ := m.Admit(context.Background(), pd)
			if ok != tt.wantOK || reason != tt.wantReason {
				t.Errorf("Admit = %t %q, want %t %q", ok, reason, tt.wantOK, tt.wantReason)
			}
			if d := cmp.Diff(tt.wantAllocated, p.allocated); d != "" {
				t.Errorf("allocations (-want +got):\n%s", d)
			}
		})
	}
}

func TestNewRefusesTooManyNUMANodes(t *testing.T) {
	nine := &NUMAInfo{Nodes: []int{0, 1, 2, 3, 4, 5, 6, 7, 8}}
	_, err := New(Config{Policy: PolicyBestEffort, Scope: ScopeContainer, Options: Options{MaxAllowableNUMANodes: 8}, NUMA: nine})
	if err == nil || err.Error() != "unsupported on machines with more than 8 NUMA Nodes" {
		t.Errorf("New on 9 nodes: %v", err)
	}
	if _, err := New(Config{Policy: PolicyBestEffort, Scope: ScopeContainer, Options: Options{MaxAllowableNUMANodes: 9}, NUMA: nine}); err != nil {
		t.Errorf("New on 9 nodes with max-allowable-numa-nodes 9: %v", err)
	}
	if _, err := New(Config{Policy: PolicyNone, Options: Options{MaxAllowableNUMANodes: 8}, NUMA: nine}); err != nil {
		t.Errorf("none on 9 nodes: %v", err)
	}
}
