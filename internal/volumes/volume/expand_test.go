package volume

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berthk8s/berth/internal/volumes/csi"
)

// fakeExpander records the expansions asked of the CSI mounter and fails
// them with err.
type fakeExpander struct {
	mu    sync.Mutex // guards the fields below
	sizes []string
	// kinds are the calls' block and at-mount flags ("block at mount",
	// "filesystem online").
	kinds []string
	err   error
}

func (f *fakeExpander) Expand(_ context.Context, _ *corev1.Pod, v csi.Volume, e csi.Expansion) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sizes = append(f.sizes, v.SpecName+"="+e.NewSize.String())
	kind := map[bool]string{true: "block", false: "filesystem"}[v.Block] + map[bool]string{true: " at mount", false: " online"}[e.AtMount]
	f.kinds = append(f.kinds, kind)
	return f.err
}

func (f *fakeExpander) kindsOf() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.kinds...)
}

func (f *fakeExpander) calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.sizes...)
}

// fakeClaimRecorder records the events about claims.
type fakeClaimRecorder struct {
	mu       sync.Mutex // guards messages
	messages []string
}

func (r *fakeClaimRecorder) ClaimEventf(pvc *corev1.PersistentVolumeClaim, eventType, reason, messageFmt string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.messages = append(r.messages, pvc.Name+": "+eventType+" "+reason+" "+fmt.Sprintf(messageFmt, args...))
}

// expandEnv is csiEnv with a fake expander, a claim recorder and the
// claim "c" (1Gi) bound to the CSI volume pv1 (1Gi).
type expandEnv struct {
	env
	csi    *fakeCSI
	exp    *fakeExpander
	claims *fakeClaimRecorder
}

func newExpandEnv(t *testing.T, edit func(*corev1.PersistentVolumeClaim, *corev1.PersistentVolume)) expandEnv {
	t.Helper()
	e, f := csiEnv(t, csi.Published{})
	x := expandEnv{env: e, csi: f, exp: &fakeExpander{}, claims: &fakeClaimRecorder{}}
	e.m.cfg.Expander, e.m.cfg.ClaimRecorder = x.exp, x.claims
	pvc, pv := resizeClaim()
	legacyClaim(pvc)
	pvc.Status.Conditions = nil
	pv.Spec.Capacity = storage(gi1)
	pv.Spec.CSI.NodeExpandSecretRef = &corev1.SecretReference{Namespace: "sec", Name: "expand"}
	if edit != nil {
		edit(pvc, pv)
	}
	if err := e.client.Tracker().Add(pvc); err != nil {
		t.Fatal(err)
	}
	if err := e.client.Tracker().Add(pv); err != nil {
		t.Fatal(err)
	}
	return x
}

// resize plays the resize controller: the volume grown to size, the
// claim's status as the external-resizer leaves it when the node must
// expand the volume.
func (x expandEnv) resize(t *testing.T, size resource.Quantity) {
	t.Helper()
	ctx := context.Background()
	pv, err := x.client.CoreV1().PersistentVolumes().Get(ctx, "pv1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pv.Spec.Capacity = storage(size)
	if _, err := x.client.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	pvc := x.claim(t)
	pvc.Spec.Resources.Requests = storage(size)
	pvc.Status.AllocatedResources = storage(size)
	pvc.Status.AllocatedResourceStatuses = map[corev1.ResourceName]corev1.ClaimResourceStatus{
		corev1.ResourceStorage: corev1.PersistentVolumeClaimNodeResizePending,
	}
	pvc.Status.Conditions = []corev1.PersistentVolumeClaimCondition{{
		Type: corev1.PersistentVolumeClaimFileSystemResizePending, Status: corev1.ConditionTrue,
		Message: "Waiting for user to (re-)start a pod to finish file system resize of volume on node.",
	}}
	if _, err := x.client.CoreV1().PersistentVolumeClaims("ns").Update(ctx, pvc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (x expandEnv) claim(t *testing.T) *corev1.PersistentVolumeClaim {
	t.Helper()
	pvc, err := x.client.CoreV1().PersistentVolumeClaims("ns").Get(context.Background(), "c", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return pvc
}

// finished is the claim's status after a node expansion to size.
func finished(size resource.Quantity) corev1.PersistentVolumeClaimStatus {
	return corev1.PersistentVolumeClaimStatus{
		Phase: corev1.ClaimBound, Capacity: storage(size), AllocatedResources: storage(size),
		Conditions: []corev1.PersistentVolumeClaimCondition{},
	}
}

var ignoreEmpty = cmpopts.EquateEmpty()

// TestOnlineExpansion: a published CSI volume whose PersistentVolume the
// resize controller grew is expanded on the node at the next refresh, to
// the claim's allocatedResources; the claim's status ends as upstream's
// kubelet leaves it (capacity, no resize status, no resize condition),
// with FileSystemResizeSuccessful on the pod and the claim; the next
// refresh does nothing.
func TestOnlineExpansion(t *testing.T) {
	x := newExpandEnv(t, nil)
	ctx := context.Background()
	pod := claimPod(pvcSource("c", false))
	pod.Spec.NodeName = "node"
	if _, err := x.m.SetUp(ctx, pod); err != nil {
		t.Fatal(err)
	}
	x.m.refresh(ctx, false)
	if calls := x.exp.calls(); len(calls) != 0 {
		t.Fatalf("expansions before any resize: %v", calls)
	}
	x.resize(t, gi2)
	x.m.refresh(ctx, false)
	x.m.refresh(ctx, false)
	if diff := cmp.Diff([]string{"pv1=2Gi"}, x.exp.calls()); diff != "" {
		t.Errorf("expansions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(finished(gi2), x.claim(t).Status, ignoreEmpty); diff != "" {
		t.Errorf("claim status (-want +got):\n%s", diff)
	}
	msg := `MountVolume.NodeExpandVolume succeeded for volume "pv1" node`
	if diff := cmp.Diff([]string{"Normal FileSystemResizeSuccessful " + msg}, x.events.messages); diff != "" {
		t.Errorf("pod events (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"c: Normal FileSystemResizeSuccessful " + msg}, x.claims.messages); diff != "" {
		t.Errorf("claim events (-want +got):\n%s", diff)
	}
}

// TestOnlineExpansionFails: a final failure of the driver leaves the claim
// with upstream's NodeResizeError condition (and NodeResizeInProgress),
// and the pod with a VolumeResizeFailed warning; an infeasible one marks
// the claim NodeResizeInfeasible.
func TestOnlineExpansionFails(t *testing.T) {
	for _, tc := range []struct {
		name       string
		failure    csi.ExpandFailure
		wantStatus corev1.ClaimResourceStatus
	}{
		{"failed", csi.ExpandFailed, corev1.PersistentVolumeClaimNodeResizeInProgress},
		{"infeasible", csi.ExpandInfeasible, corev1.PersistentVolumeClaimNodeResizeInfeasible},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := newExpandEnv(t, nil)
			ctx := context.Background()
			if _, err := x.m.SetUp(ctx, claimPod(pvcSource("c", false))); err != nil {
				t.Fatal(err)
			}
			x.resize(t, gi2)
			x.exp.err = &csi.ExpandError{Failure: tc.failure, Err: fmt.Errorf("disk full")}
			x.m.refresh(ctx, false)
			status := x.claim(t).Status
			if s := status.AllocatedResourceStatuses[corev1.ResourceStorage]; s != tc.wantStatus {
				t.Errorf("resize status %q, want %q", s, tc.wantStatus)
			}
			if c := condition(status, corev1.PersistentVolumeClaimNodeResizeError); c == nil || c.Message != "failed to expand pvc with disk full" || !c.LastTransitionTime.Time.Equal(t0) {
				t.Errorf("NodeResizeError condition %+v, want upstream's at %v", c, t0)
			}
			if condition(status, corev1.PersistentVolumeClaimFileSystemResizePending) == nil {
				t.Error("the FileSystemResizePending condition went")
			}
			if !storageOf(status.Capacity).Equal(gi1) {
				t.Errorf("capacity %v, want still 1Gi", status.Capacity)
			}
			want := []string{`Warning VolumeResizeFailed NodeExpandVolume.NodeExpandVolume failed for volume "pv1" : disk full`}
			if diff := cmp.Diff(want, x.events.messages); diff != "" {
				t.Errorf("pod events (-want +got):\n%s", diff)
			}
		})
	}
}

func condition(s corev1.PersistentVolumeClaimStatus, t corev1.PersistentVolumeClaimConditionType) *corev1.PersistentVolumeClaimCondition {
	for i := range s.Conditions {
		if s.Conditions[i].Type == t {
			return &s.Conditions[i]
		}
	}
	return nil
}

// TestOnlineExpansionLegacy: with an older resize controller (no
// allocatedResources, no resize status) the volume is expanded to the
// PersistentVolume's capacity and the claim marked finished; a driver
// without EXPAND_VOLUME counts as finished and the claim is left alone,
// as upstream's legacyCallNodeExpandOnPlugin.
func TestOnlineExpansionLegacy(t *testing.T) {
	for _, tc := range []struct {
		name       string
		err        error
		wantStatus corev1.PersistentVolumeClaimStatus
	}{
		{"expanded", nil, corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, Capacity: storage(gi2)}},
		{"not supported", &csi.ExpandError{Failure: csi.ExpandNotSupported, Err: fmt.Errorf("NodeExpand is not supported by the CSI driver mock.csi")},
			corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, Capacity: storage(gi1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := newExpandEnv(t, nil)
			ctx := context.Background()
			if _, err := x.m.SetUp(ctx, claimPod(pvcSource("c", false))); err != nil {
				t.Fatal(err)
			}
			pv, _ := x.client.CoreV1().PersistentVolumes().Get(ctx, "pv1", metav1.GetOptions{})
			pv.Spec.Capacity = storage(gi2)
			if _, err := x.client.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			x.exp.err = tc.err
			x.m.refresh(ctx, false)
			x.m.refresh(ctx, false)
			if diff := cmp.Diff([]string{"pv1=2Gi"}, x.exp.calls()); diff != "" {
				t.Errorf("expansions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantStatus, x.claim(t).Status, ignoreEmpty); diff != "" {
				t.Errorf("claim status (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOnlineExpansionWaits: while the resize controller is still at work
// (ControllerResizeInProgress) the node does not expand the volume.
func TestOnlineExpansionWaits(t *testing.T) {
	x := newExpandEnv(t, nil)
	ctx := context.Background()
	if _, err := x.m.SetUp(ctx, claimPod(pvcSource("c", false))); err != nil {
		t.Fatal(err)
	}
	x.resize(t, gi2)
	pvc := x.claim(t)
	pvc.Status.AllocatedResourceStatuses[corev1.ResourceStorage] = corev1.PersistentVolumeClaimControllerResizeInProgress
	if _, err := x.client.CoreV1().PersistentVolumeClaims("ns").Update(ctx, pvc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	x.m.refresh(ctx, false)
	if calls := x.exp.calls(); len(calls) != 0 {
		t.Errorf("expansions while the controller resizes: %v", calls)
	}
}

// TestExpansionAtMount: a volume the controller expanded before the pod
// started is expanded right after its publication; a failure fails the
// set-up with upstream's FailedMount message and the next set-up
// publishes and expands again; a read-only claim is not expanded and
// gets FileSystemResizeFailed.
func TestExpansionAtMount(t *testing.T) {
	grown := func(pvc *corev1.PersistentVolumeClaim, pv *corev1.PersistentVolume) {
		pv.Spec.Capacity = storage(gi2)
		pvc.Spec.Resources.Requests = storage(gi2)
		pvc.Status.AllocatedResources = storage(gi2)
		pvc.Status.AllocatedResourceStatuses = map[corev1.ResourceName]corev1.ClaimResourceStatus{
			corev1.ResourceStorage: corev1.PersistentVolumeClaimNodeResizePending,
		}
	}
	t.Run("expanded", func(t *testing.T) {
		x := newExpandEnv(t, grown)
		x.exp.err = &csi.ExpandError{Failure: csi.ExpandFailed, Err: fmt.Errorf("not yet")}
		ctx := context.Background()
		pod := claimPod(pvcSource("c", false))
		_, err := x.m.SetUp(ctx, pod)
		if want := `MountVolume.Setup failed while expanding volume for volume "pv1" : not yet`; err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("SetUp() = %v, want %q", err, want)
		}
		if diff := cmp.Diff([]string{`Warning FailedMount MountVolume.Setup failed while expanding volume for volume "pv1" : not yet`}, x.events.messages); diff != "" {
			t.Errorf("pod events (-want +got):\n%s", diff)
		}
		x.exp.err = nil
		if _, err := x.m.SetUp(ctx, pod); err != nil {
			t.Fatal(err)
		}
		if n, _ := x.csi.calls(); n != 2 {
			t.Errorf("%d publications, want 2 (the failed expansion publishes again)", n)
		}
		if diff := cmp.Diff([]string{"pv1=2Gi", "pv1=2Gi"}, x.exp.calls()); diff != "" {
			t.Errorf("expansions (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(finished(gi2), x.claim(t).Status, ignoreEmpty); diff != "" {
			t.Errorf("claim status (-want +got):\n%s", diff)
		}
		// The size on the node is still the claim's when resolved: the
		// next refresh finds the claim updated and calls nothing.
		x.m.refresh(ctx, false)
		if n := len(x.exp.calls()); n != 2 {
			t.Errorf("%d expansions after a refresh, want still 2", n)
		}
	})
	t.Run("read-only", func(t *testing.T) {
		x := newExpandEnv(t, grown)
		if _, err := x.m.SetUp(context.Background(), claimPod(pvcSource("c", true))); err != nil {
			t.Fatal(err)
		}
		if calls := x.exp.calls(); len(calls) != 0 {
			t.Errorf("expansions of a read-only claim: %v", calls)
		}
		msg := `Warning FileSystemResizeFailed MountVolume.NodeExpandVolume failed for volume "pv1" requested read-only file system`
		if diff := cmp.Diff([]string{msg}, x.events.messages); diff != "" {
			t.Errorf("pod events (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"c: " + msg}, x.claims.messages); diff != "" {
			t.Errorf("claim events (-want +got):\n%s", diff)
		}
	})
}
