package nodestatus

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2/ktesting"
	clocktesting "k8s.io/utils/clock/testing"
)

type leaseHarness struct {
	client *fake.Clientset
	clock  *clocktesting.FakeClock
	lease  *Lease
	mu     sync.Mutex // guards uid
	uid    types.UID
}

func newLeaseHarness(t *testing.T, uid types.UID) *leaseHarness {
	t.Helper()
	h := &leaseHarness{client: fake.NewClientset(), clock: clocktesting.NewFakeClock(t0), uid: uid}
	l, err := NewLease(LeaseConfig{
		Client: h.client, NodeName: "node-a", Duration: 40, Clock: h.clock,
		NodeUID: func() types.UID { h.mu.Lock(); defer h.mu.Unlock(); return h.uid },
	})
	if err != nil {
		t.Fatal(err)
	}
	h.lease = l
	return h
}

func (h *leaseHarness) requests() []string {
	var out []string
	for _, a := range h.client.Actions() {
		out = append(out, a.GetVerb()+" "+a.GetResource().Resource)
	}
	h.client.ClearActions()
	return out
}

func (h *leaseHarness) stored(t *testing.T) *coordinationv1.Lease {
	t.Helper()
	l, err := h.client.CoordinationV1().Leases("kube-node-lease").Get(context.Background(), "node-a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h.client.ClearActions()
	return l
}

func wantLease(renew time.Time) coordinationv1.LeaseSpec {
	holder, d := "node-a", int32(40)
	return coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &d, RenewTime: &metav1.MicroTime{Time: renew}}
}

func TestLeaseCreatesThenRenewsEveryQuarter(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	h := newLeaseHarness(t, "uid-1")
	done := make(chan error)
	go func() { done <- h.lease.Run(ctx) }()

	waitFor(t, "the first renew wait", h.clock.HasWaiters)
	if diff := cmp.Diff([]string{"get leases", "create leases"}, h.requests()); diff != "" {
		t.Errorf("requests mismatch (-want +got):\n%s", diff)
	}
	got := h.stored(t)
	if diff := cmp.Diff(wantLease(t0), got.Spec); diff != "" {
		t.Errorf("lease spec mismatch (-want +got):\n%s", diff)
	}
	wantOwner := []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: "node-a", UID: "uid-1"}}
	if diff := cmp.Diff(wantOwner, got.OwnerReferences); diff != "" {
		t.Errorf("owner mismatch (-want +got):\n%s", diff)
	}

	h.clock.Step(10*time.Second - time.Millisecond)
	if r := h.requests(); len(r) != 0 {
		t.Errorf("renewed before a quarter of the duration: %v", r)
	}
	h.clock.Step(time.Millisecond)
	waitFor(t, "the renewal", func() bool { return len(h.client.Actions()) > 0 && h.clock.HasWaiters() })
	// Renewal starts from the lease berth wrote last: no GET.
	if diff := cmp.Diff([]string{"update leases"}, h.requests()); diff != "" {
		t.Errorf("renew requests mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantLease(t0.Add(10*time.Second)), h.stored(t).Spec); diff != "" {
		t.Errorf("renewed lease spec mismatch (-want +got):\n%s", diff)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run() = %v", err)
	}
}

func TestLeaseWaitsForNodeUIDWithBackoff(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	h := newLeaseHarness(t, "")
	done := make(chan error)
	go func() { done <- h.lease.Run(ctx) }()

	for _, wait := range []time.Duration{200 * time.Millisecond, 400 * time.Millisecond} {
		waitFor(t, "a backoff wait", func() bool { return len(h.client.Actions()) > 0 && h.clock.HasWaiters() })
		if diff := cmp.Diff([]string{"get leases"}, h.requests()); diff != "" {
			t.Errorf("requests mismatch (-want +got):\n%s", diff)
		}
		h.clock.Step(wait - time.Millisecond)
		if r := h.requests(); len(r) != 0 {
			t.Fatalf("retried before %v: %v", wait, r)
		}
		h.clock.Step(time.Millisecond)
	}
	waitFor(t, "a backoff wait", func() bool { return len(h.client.Actions()) > 0 && h.clock.HasWaiters() })
	h.requests()
	h.mu.Lock()
	h.uid = "uid-1"
	h.mu.Unlock()
	h.clock.Step(800 * time.Millisecond)
	waitFor(t, "the lease", func() bool { return len(h.client.Actions()) == 2 })
	if diff := cmp.Diff([]string{"get leases", "create leases"}, h.requests()); diff != "" {
		t.Errorf("requests mismatch (-want +got):\n%s", diff)
	}
	cancel()
	_ = <-done
}

func TestLeaseSync(t *testing.T) {
	gr := schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}
	tests := []struct {
		name    string
		prepare func(*leaseHarness, *coordinationv1.Lease)
		want    []string
	}{
		{
			name:    "renews from the latest lease",
			prepare: func(*leaseHarness, *coordinationv1.Lease) {},
			want:    []string{"update leases"},
		},
		{
			name: "re-creates a deleted lease",
			prepare: func(h *leaseHarness, _ *coordinationv1.Lease) {
				_ = h.client.CoordinationV1().Leases("kube-node-lease").Delete(context.Background(), "node-a", metav1.DeleteOptions{})
			},
			want: []string{"update leases", "get leases", "create leases"},
		},
		{
			name: "a conflict reads the lease again",
			prepare: func(h *leaseHarness, _ *coordinationv1.Lease) {
				once := false
				h.client.PrependReactor("update", "leases", func(k8stesting.Action) (bool, kruntime.Object, error) {
					if once {
						return false, nil, nil
					}
					once = true
					return true, nil, apierrors.NewConflict(gr, "node-a", nil)
				})
			},
			want: []string{"update leases", "get leases", "update leases"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			h := newLeaseHarness(t, "uid-1")
			latest := h.lease.sync(ctx, nil)
			h.requests()
			tt.prepare(h, latest)
			h.client.ClearActions()
			h.clock.Step(10 * time.Second)
			if got := h.lease.sync(ctx, latest); got == nil {
				t.Errorf("sync() = nil lease")
			}
			if diff := cmp.Diff(tt.want, h.requests()); diff != "" {
				t.Errorf("requests mismatch (-want +got):\n%s", diff)
			}
			if got := h.stored(t).Spec.RenewTime.Time; !got.Equal(t0.Add(10 * time.Second)) {
				t.Errorf("renew time = %v", got)
			}
		})
	}
}

func TestNewLeaseValidates(t *testing.T) {
	if _, err := NewLease(LeaseConfig{}); err == nil {
		t.Errorf("NewLease(empty) = nil error")
	}
	_, err := NewLease(LeaseConfig{Client: fake.NewClientset(), NodeName: "n", Clock: clocktesting.NewFakeClock(t0),
		NodeUID: func() types.UID { return "" }})
	if err == nil {
		t.Errorf("NewLease(zero duration) = nil error")
	}
}
