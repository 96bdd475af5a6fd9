package podsync

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berthk8s/berth/internal/pod/kuberuntime"
	"github.com/berthk8s/berth/internal/pod/podstatus"
	"github.com/berthk8s/berth/internal/pod/podworker"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
	"github.com/berthk8s/berth/internal/volumes/transient"
	"github.com/berthk8s/berth/internal/volumes/volume"
)

// failingVolumes is a volume manager whose SetUp returns err.
type failingVolumes struct{ err error }

func (v *failingVolumes) SetUp(context.Context, *corev1.Pod) (map[string]string, error) {
	return map[string]string{}, v.err
}
func (v *failingVolumes) SupplementalGroups(*corev1.Pod) []int64 { return nil }
func (v *failingVolumes) RelabeledVolumes(context.Context, *corev1.Pod, map[string]string) map[string]bool {
	return nil
}
func (v *failingVolumes) TearDown(context.Context, types.UID) error { return nil }
func (v *failingVolumes) Update(*corev1.Pod)                        {}

// TestWaitReachesReadyToStartContainers: what stopped a sync before the
// sandbox (a volume, the claims, the sandbox's network) is the reason and
// message of PodReadyToStartContainers, counted while it repeats (unless
// it is a wait the pod worker polls), and gone once a sync gets past it.
func TestWaitReachesReadyToStartContainers(t *testing.T) {
	type view struct{ Status, Reason, Message string }
	const nsb = podstatus.ReasonPodSandboxNotReady
	f := newFixture(t)
	vols := &failingVolumes{}
	f.s.cfg.Volumes = vols
	pod := testPod(corev1.RestartPolicyAlways)
	pod.Spec.Volumes = []corev1.Volume{{Name: "data"}, {Name: "cm"}}
	claimPod := testPod(corev1.RestartPolicyAlways)
	claimPod.UID, claimPod.Name = "u2", "claims"
	claimPod.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu"}}
	notBound := errors.Join(
		&volume.SetUpError{Volume: "data", Err: errors.New("error processing PVC default/data: PVC is not bound")},
		&volume.SetUpError{Volume: "cm", Err: errors.New(`configmap "cm" not found`)})
	pending := &volume.SetUpError{Volume: "data", Err: fmt.Errorf("error processing PVC default/data: %w", transient.Waiting(errors.New("PVC is not bound")))}
	cni := &runtimestate.StartFailure{Reason: kuberuntime.ReasonNetworkSetupFailed,
		Message: "setting up the pod network failed: failed to setup network for sandbox \"web\":\n plugin type=\"bridge\" failed (add)"}

	steps := []struct {
		name    string
		pod     *corev1.Pod
		volErr  error
		sandbox *runtimestate.StartFailure
		want    view
	}{
		{"PVC not bound", pod, notBound, nil,
			view{"False", nsb, `no pod sandbox exists; VolumeNotReady: volume "data" is not ready: error processing PVC default/data: PVC is not bound`}},
		{"still not bound", pod, notBound, nil,
			view{"False", nsb, `no pod sandbox exists; VolumeNotReady: volume "data" is not ready: error processing PVC default/data: PVC is not bound (2 times in a row)`}},
		{"claim Pending, a wait the worker polls", pod, pending, nil,
			view{"False", nsb, `no pod sandbox exists; VolumeNotReady: volume "data" is not ready: error processing PVC default/data: PVC is not bound`}},
		{"polled again: not counted, the status stays", pod, pending, nil,
			view{"False", nsb, `no pod sandbox exists; VolumeNotReady: volume "data" is not ready: error processing PVC default/data: PVC is not bound`}},
		{"CNI fails", pod, nil, cni,
			view{"False", nsb, `no pod sandbox exists; NetworkSetupFailed: setting up the pod network failed: failed to setup network for sandbox "web": plugin type="bridge" failed (add)`}},
		{"CNI fails again", pod, nil, cni,
			view{"False", nsb, `no pod sandbox exists; NetworkSetupFailed: setting up the pod network failed: failed to setup network for sandbox "web": plugin type="bridge" failed (add) (2 times in a row)`}},
		{"sandbox created (not yet seen by the runtime state)", pod, nil, nil,
			view{"False", nsb, "no pod sandbox exists"}},
		{"no DRA manager", claimPod, nil, nil,
			view{"False", nsb, "no pod sandbox exists; ClaimsNotPrepared: resource claims are not prepared: berth runs without a DRA manager"}},
	}
	for _, st := range steps {
		vols.err, f.rt.sandbox, f.rt.err = st.volErr, st.sandbox, nil
		if st.sandbox != nil {
			f.rt.err = errors.New("create pod sandbox: " + st.sandbox.Message)
		}
		_, err := f.s.SyncPod(f.ctx, podworker.SyncPodCreate, st.pod, &runtimestate.Pod{UID: st.pod.UID})
		if (st.volErr != nil || st.sandbox != nil) && err == nil {
			t.Errorf("%s: SyncPod succeeded", st.name)
		}
		status, _ := f.store.Get(st.pod.UID)
		var got view
		for _, c := range status.Conditions {
			if c.Type == corev1.PodReadyToStartContainers {
				got = view{string(c.Status), c.Reason, c.Message}
			}
		}
		if diff := cmp.Diff(st.want, got); diff != "" {
			t.Errorf("%s: PodReadyToStartContainers (-want +got):\n%s", st.name, diff)
		}
	}
}
