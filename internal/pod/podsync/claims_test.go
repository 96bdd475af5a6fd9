package podsync

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/pod/podworker"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// claims is a DRA manager that records its calls into the runtime's
// call log and fails Prepare with err.
type claims struct {
	rt  *runtime
	err error
}

func (c *claims) Prepare(_ context.Context, pod *corev1.Pod) error {
	c.rt.calls = append(c.rt.calls, "prepare "+pod.Name)
	return c.err
}

func (c *claims) Unprepare(_ context.Context, uid types.UID) error {
	c.rt.calls = append(c.rt.calls, "unprepare "+string(uid))
	return c.err
}

func claimPod() *corev1.Pod {
	pod := testPod(corev1.RestartPolicyAlways)
	pod.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptr.To("gpu")}}
	return pod
}

// TestClaimsArePreparedBeforeTheSandbox: a pod with resourceClaims has
// them prepared before the apply that creates its sandbox, and only then;
// a pod without claims never reaches the DRA manager.
func TestClaimsArePreparedBeforeTheSandbox(t *testing.T) {
	f := newFixture(t)
	c := &claims{rt: f.rt}
	f.s.cfg.Claims = c
	if _, err := f.s.SyncPod(f.ctx, podworker.SyncPodCreate, claimPod(), &runtimestate.Pod{UID: "u1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.SyncPod(f.ctx, podworker.SyncPodSync, claimPod(), running()); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.SyncPod(f.ctx, podworker.SyncPodCreate, testPod(corev1.RestartPolicyAlways), &runtimestate.Pod{UID: "u1"}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"prepare web", "sync web", "sync web", "sync web"}, f.rt.calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

// TestExtendedResourceClaimIsPrepared: a pod whose only claim is the one
// the scheduler allocated for its DRA-backed extended resources
// (status.extendedResourceClaimStatus) has it prepared before its sandbox
// too, as upstream, which prepares every pod's claims there.
func TestExtendedResourceClaimIsPrepared(t *testing.T) {
	f := newFixture(t)
	f.s.cfg.Claims = &claims{rt: f.rt}
	pod := testPod(corev1.RestartPolicyAlways)
	pod.Status.ExtendedResourceClaimStatus = &corev1.PodExtendedResourceClaimStatus{ResourceClaimName: "web-extended-resources-x",
		RequestMappings: []corev1.ContainerExtendedResourceRequest{{ContainerName: pod.Spec.Containers[0].Name, ResourceName: "example.com/gpu", RequestName: "container-0-request-0"}}}
	if _, err := f.s.SyncPod(f.ctx, podworker.SyncPodCreate, pod, &runtimestate.Pod{UID: "u1"}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"prepare web", "sync web"}, f.rt.calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

// TestPodWaitsForItsClaims: claims that cannot be prepared keep the pod
// from the runtime, with upstream's event and an error for the worker's
// back-off; no DRA manager at all is the same wait.
func TestPodWaitsForItsClaims(t *testing.T) {
	for name, prepare := range map[string]*claims{
		"not ready":      {err: errors.New("ResourceClaim web-gpu: not allocated")},
		"no DRA manager": nil,
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			rec := &events{}
			f.s.cfg.Recorder = rec
			want := "berth runs without a DRA manager"
			if prepare != nil {
				prepare.rt = f.rt
				f.s.cfg.Claims = prepare
				want = prepare.err.Error()
			}
			_, err := f.s.SyncPod(f.ctx, podworker.SyncPodCreate, claimPod(), &runtimestate.Pod{UID: "u1"})
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("SyncPod = %v, want the wait's error %q", err, want)
			}
			if slices.Contains(f.rt.calls, "sync web") {
				t.Errorf("the pod reached the runtime: %v", f.rt.calls)
			}
			if !slices.Equal(rec.reasons, []string{eventFailedPrepareDynamicResources}) {
				t.Errorf("events %v, want one %s", rec.reasons, eventFailedPrepareDynamicResources)
			}
			st, _ := f.store.Get("u1")
			if w := st.ContainerStatuses[0].State.Waiting; st.Phase != corev1.PodPending || w == nil || w.Reason != "ContainerCreating" {
				t.Errorf("status %s %+v, want Pending, ContainerCreating", st.Phase, w)
			}
		})
	}
}

// TestClaimsAreUnpreparedOnceTheContainersStopped: after the kill and
// before the final status; a failure fails the termination (retried).
func TestClaimsAreUnpreparedOnceTheContainersStopped(t *testing.T) {
	f := newFixture(t)
	f.rt.after = exited(0)
	c := &claims{rt: f.rt}
	f.s.cfg.Claims = c
	if err := f.s.SyncTerminatingPod(f.ctx, claimPod(), running(), podworker.Kill{GracePeriod: 3}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"kill web grace=3s", "status u1", "unprepare u1"}, f.rt.calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	c.err = errors.New("driver gone")
	if err := f.s.SyncTerminatingPod(f.ctx, claimPod(), running(), podworker.Kill{GracePeriod: 3}); err == nil || !strings.Contains(err.Error(), "driver gone") {
		t.Errorf("SyncTerminatingPod with a failing unprepare = %v", err)
	}
}
