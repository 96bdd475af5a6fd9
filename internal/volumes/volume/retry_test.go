package volume

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"
)

// forbiddenNode is what the node authorizer answers before it knows the
// pod → node edge.
var forbiddenNode = apierrors.NewForbidden(schema.GroupResource{Resource: "serviceaccounts"}, "sa",
	errors.New(`User "system:node:node" cannot create resource "serviceaccounts/token" in API group "" in the namespace "ns": no relationship found between node 'node' and this object`))

// refuse makes the next n requests of verb on resource fail with err, and
// counts every request of verb on resource.
func refuse(e env, verb, resource string, n int, err error) *int {
	var mu sync.Mutex
	calls := 0
	e.client.PrependReactor(verb, resource, func(k8stesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls <= n {
			return true, nil, err
		}
		return false, nil, nil
	})
	return &calls
}

// driven runs fn while stepping the fake clock whenever fn waits on it,
// and returns fn's error and how far the clock moved.
func driven(e env, fn func() error) (time.Duration, error) {
	start := e.clock.Now()
	errc := make(chan error, 1)
	go func() { errc <- fn() }()
	for {
		select {
		case err := <-errc:
			return e.clock.Since(start), err
		default:
		}
		if e.clock.HasWaiters() {
			e.clock.Step(100 * time.Millisecond)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestSetUpRetriesTransientFailures(t *testing.T) {
	tests := []struct {
		name       string
		verb, res  string
		refusals   int
		err        error
		wantCalls  int
		wantErr    bool
		wantEvents int
		maxWait    time.Duration
	}{
		{name: "token forbidden twice right after binding", verb: "create", res: "serviceaccounts", refusals: 2, err: forbiddenNode,
			wantCalls: 3, maxWait: 700 * time.Millisecond},
		{name: "bound pod not yet found by the API server", verb: "create", res: "serviceaccounts", refusals: 1,
			err: apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "web"), wantCalls: 2, maxWait: 300 * time.Millisecond},
		{name: "bound pod not yet in the admission plugin's informer", verb: "create", res: "serviceaccounts", refusals: 2,
			err: apierrors.NewNotFound(schema.GroupResource{Resource: "pod"}, "web"), wantCalls: 3, maxWait: 700 * time.Millisecond},
		{name: "configMap read throttled once", verb: "get", res: "configmaps", refusals: 1, err: apierrors.NewTooManyRequests("slow down", 1),
			wantCalls: 2, maxWait: 300 * time.Millisecond},
		{name: "kube-root-ca.crt published a moment after the pod", verb: "get", res: "configmaps", refusals: 2,
			err: apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, "kube-root-ca.crt"), wantCalls: 3, maxWait: 700 * time.Millisecond},
		{name: "token forbidden for good", verb: "create", res: "serviceaccounts", refusals: 100, err: forbiddenNode,
			wantCalls: 6, wantErr: true, wantEvents: 1, maxWait: 5100 * time.Millisecond},
		{name: "token unauthorized is not retried", verb: "create", res: "serviceaccounts", refusals: 100, err: apierrors.NewUnauthorized("who"),
			wantCalls: 1, wantErr: true, wantEvents: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, clusterObjects()...)
			calls := refuse(e, tt.verb, tt.res, tt.refusals, tt.err)
			pod := testPod()
			pod.Spec.Volumes = []corev1.Volume{kubeAPIAccess()}
			waited, err := driven(e, func() error { _, err := e.m.SetUp(context.Background(), pod); return err })
			if (err != nil) != tt.wantErr {
				t.Fatalf("SetUp() error = %v, want error %v", err, tt.wantErr)
			}
			if *calls != tt.wantCalls {
				t.Errorf("%s %s requests = %d, want %d", tt.verb, tt.res, *calls, tt.wantCalls)
			}
			if waited > tt.maxWait {
				t.Errorf("SetUp took %v of the clock, want at most %v", waited, tt.maxWait)
			}
			if got := len(e.events.messages); got != tt.wantEvents {
				t.Errorf("FailedMount events = %d (%v), want %d", got, e.events.messages, tt.wantEvents)
			}
		})
	}
}

// A forbidden answer long after the pod was first seen is a real denial:
// it is not retried (the cached token has expired, so nothing is kept).
func TestSetUpForbiddenForAnOldPodIsNotRetried(t *testing.T) {
	e := newEnv(t, clusterObjects()...)
	pod := testPod()
	pod.Spec.Volumes = []corev1.Volume{kubeAPIAccess()}
	if _, err := e.m.SetUp(context.Background(), pod); err != nil {
		t.Fatalf("first SetUp() = %v", err)
	}
	e.clock.Step(2 * time.Hour) // the token expired
	calls := refuse(e, "create", "serviceaccounts", 100, forbiddenNode)
	waited, _ := driven(e, func() error { e.m.refresh(context.Background(), false); return nil })
	if waited != 0 {
		t.Errorf("refresh waited %v of the clock, want no retry", waited)
	}
	if *calls != 1 {
		t.Errorf("token requests = %d, want 1 (no retry)", *calls)
	}
	want := []string{`Warning FailedMount MountVolume.SetUp failed for volume "kube-api-access-abcde" : request token of service account "sa": ` + forbiddenNode.Error()}
	if diff := cmp.Diff(want, e.events.messages); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}
