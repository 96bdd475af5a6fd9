package podgone

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2/ktesting"
)

// log is an owner that records what it was told.
type log struct {
	name string
	got  *[]string
}

func (l log) Forget(_ context.Context, uid types.UID) {
	*l.got = append(*l.got, l.name+" "+string(uid))
}

// holder is a log that also holds pods.
type holder struct {
	log
	held []types.UID
}

func (h holder) HeldPods() []types.UID { return h.held }

func TestGoneTellsEveryOwnerInOrder(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	var got []string
	r := New()
	r.Register("records", log{"records", &got})
	r.Register("statuses", log{"statuses", &got})
	r.Register("metrics", Func(func(_ context.Context, uid types.UID) { got = append(got, "metrics "+string(uid)) }))
	r.Gone(ctx, "a")
	r.Gone(ctx, "b")
	want := []string{"records a", "statuses a", "metrics a", "records b", "statuses b", "metrics b"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Forget calls (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"records", "statuses", "metrics"}, r.Owners()); diff != "" {
		t.Errorf("Owners (-want +got):\n%s", diff)
	}
}

func TestHeldIsTheUnionOfTheHolders(t *testing.T) {
	var got []string
	r := New()
	r.Register("plain", log{"plain", &got})
	r.Register("allocations", holder{log{"allocations", &got}, []types.UID{"a", "b"}})
	r.Register("tracker", holder{log{"tracker", &got}, []types.UID{"b", "c"}})
	held := r.Held()
	uids := make([]string, 0, len(held))
	for uid := range held {
		uids = append(uids, string(uid))
	}
	slices.Sort(uids)
	if diff := cmp.Diff([]string{"a", "b", "c"}, uids); diff != "" {
		t.Errorf("Held (-want +got):\n%s", diff)
	}
	if len(got) != 0 {
		t.Errorf("Held forgot something: %v", got)
	}
}

func TestRegisterRefuses(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	var got []string
	for _, tc := range []struct {
		name  string
		setup func(r *Route)
	}{
		{"a nil owner", func(r *Route) { r.Register("nil", nil) }},
		{"a name twice", func(r *Route) { r.Register("x", log{"x", &got}); r.Register("x", log{"x", &got}) }},
		{"an owner after Gone", func(r *Route) { r.Gone(ctx, "a"); r.Register("late", log{"late", &got}) }},
		{"an owner after Held", func(r *Route) { r.Held(); r.Register("late", log{"late", &got}) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("Register did not panic")
				}
			}()
			tc.setup(New())
		})
	}
}
