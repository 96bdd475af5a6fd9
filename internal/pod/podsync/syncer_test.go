package podsync

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berthk8s/berth/internal/pod/kuberuntime"
	"github.com/berthk8s/berth/internal/pod/podplan"
	"github.com/berthk8s/berth/internal/pod/podstatus"
	"github.com/berthk8s/berth/internal/pod/podworker"
	"github.com/berthk8s/berth/internal/pod/prober"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// runtime is an in-test Runtime that records calls and returns canned results.
type runtime struct {
	calls    []string
	after    *runtimestate.Pod // what PodStatus returns
	failures map[string]runtimestate.StartFailure
	err      error
	plan     podplan.Actions // of the last Apply
	// resizeErr fails the plan's resize; else its containers and pod
	// cgroup are reported actuated.
	resizeErr error
	// sandbox is the Result's Sandbox (why the sandbox was not created).
	sandbox *runtimestate.StartFailure
}

func (r *runtime) Apply(_ context.Context, pod *corev1.Pod, _ *runtimestate.Pod, plan podplan.Actions, _ kuberuntime.ApplyOptions) (kuberuntime.Result, error) {
	r.calls = append(r.calls, "sync "+pod.Name)
	r.plan = plan
	res := kuberuntime.Result{Failures: r.failures, Sandbox: r.sandbox}
	if len(plan.Resize.Containers) > 0 || plan.Resize.PodCgroup {
		if r.resizeErr != nil {
			res.ResizeErr = r.resizeErr
			return res, r.err
		}
		res.Actuated = map[string]corev1.ResourceRequirements{}
		for _, c := range plan.Resize.Containers {
			res.Actuated[c.Name] = pod.Spec.Containers[c.Index].Resources
		}
		res.PodActuated = plan.Resize.PodCgroup
	}
	return res, r.err
}

func (r *runtime) KillPod(_ context.Context, pod *corev1.Pod, rt *runtimestate.Pod, grace *int64) error {
	name := string(rt.UID)
	if pod != nil {
		name = pod.Name
	}
	g := "nil"
	if grace != nil {
		g = time.Duration(*grace * int64(time.Second)).String()
	}
	r.calls = append(r.calls, "kill "+name+" grace="+g)
	return r.err
}

func (r *runtime) RemovePod(_ context.Context, rt *runtimestate.Pod) error {
	r.calls = append(r.calls, "remove "+string(rt.UID))
	return r.err
}

func (r *runtime) PodStatus(_ context.Context, uid types.UID, _, _ string) (*runtimestate.Pod, error) {
	r.calls = append(r.calls, "status "+string(uid))
	return r.after, r.err
}

type fixture struct {
	s       *Syncer
	rt      *runtime
	store   *podstatus.Store
	desired map[types.UID]bool
	ctx     context.Context
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	f := &fixture{rt: &runtime{}, store: podstatus.NewStore(clock.RealClock{}), desired: map[types.UID]bool{}, ctx: ctx}
	s, err := New(Config{
		Runtime: f.rt, Statuses: f.store, Clock: clocktesting.NewFakePassiveClock(time.Unix(1000, 0)),
		PodsDir: t.TempDir(), HostIPs: []string{"192.0.2.10"},
		Desired: func(uid types.UID) bool { return f.desired[uid] },
	})
	if err != nil {
		t.Fatal(err)
	}
	f.s = s
	return f
}

func testPod(policy corev1.RestartPolicy) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "u1"},
		Spec: corev1.PodSpec{
			RestartPolicy: policy,
			Containers:    []corev1.Container{{Name: "web", Image: "busybox"}},
		},
	}
}

func exited(code int32) *runtimestate.Pod {
	return &runtimestate.Pod{
		UID:       "u1",
		Sandboxes: []runtimestate.Sandbox{{ID: "s1", State: runtimestate.SandboxReady, IPs: []string{"10.88.0.2"}}},
		Containers: []runtimestate.Container{{
			ID: "c1", Name: "web", SandboxID: "s1", State: runtimestate.ContainerExited, ExitCode: code,
			StartedAt: time.Unix(900, 0), FinishedAt: time.Unix(950, 0),
		}},
	}
}

func TestSyncPodConvergesAndStoresStatus(t *testing.T) {
	f := newFixture(t)
	pod := testPod(corev1.RestartPolicyAlways)
	res, err := f.s.SyncPod(f.ctx, podworker.SyncPodCreate, pod, &runtimestate.Pod{UID: "u1"})
	outcome := res.Outcome
	if outcome != podworker.SyncSteady || err != nil {
		t.Fatalf("SyncPod = %v, %v; want steady, nil", outcome, err)
	}
	if diff := cmp.Diff([]string{"sync web"}, f.rt.calls); diff != "" {
		t.Errorf("runtime calls (-want +got):\n%s", diff)
	}
	st, ok := f.store.Get("u1")
	if !ok || st.Phase != corev1.PodPending || st.HostIP != "192.0.2.10" {
		t.Errorf("stored status = %v %+v; want Pending with the host IP", ok, st)
	}
	if _, err := os.Stat(f.s.PodDir("u1")); err != nil {
		t.Errorf("pod directory: %v", err)
	}
}

func TestSyncPodTerminalPhaseEndsThePod(t *testing.T) {
	f := newFixture(t)
	res, err := f.s.SyncPod(f.ctx, podworker.SyncPodSync, testPod(corev1.RestartPolicyNever), exited(0))
	outcome := res.Outcome
	if outcome != podworker.SyncTerminal || err != nil {
		t.Fatalf("SyncPod = %v, %v; want terminal, nil", outcome, err)
	}
	if len(f.rt.calls) != 0 {
		t.Errorf("a finished pod must not be synced to the runtime, got %v", f.rt.calls)
	}
	if st, _ := f.store.Get("u1"); st.Phase != corev1.PodSucceeded {
		t.Errorf("phase = %s, want Succeeded", st.Phase)
	}
}

func TestStartFailuresReachStatusAndRetry(t *testing.T) {
	f := newFixture(t)
	f.rt.failures = map[string]runtimestate.StartFailure{"web": {Reason: "ErrImagePull", Message: "pull failed"}}
	_, err := f.s.SyncPod(f.ctx, podworker.SyncPodCreate, testPod(corev1.RestartPolicyAlways), &runtimestate.Pod{UID: "u1"})
	if err == nil {
		t.Fatal("SyncPod with a start failure must return an error so the worker retries")
	}
	st, _ := f.store.Get("u1")
	w := st.ContainerStatuses[0].State.Waiting
	if w == nil || w.Reason != "ErrImagePull" || w.Message != "pull failed" {
		t.Errorf("waiting state = %+v, want ErrImagePull: pull failed", w)
	}

	f.rt.failures = nil
	if _, err := f.s.SyncPod(f.ctx, podworker.SyncPodSync, testPod(corev1.RestartPolicyAlways), &runtimestate.Pod{UID: "u1"}); err != nil {
		t.Fatalf("SyncPod after recovery: %v", err)
	}
	st, _ = f.store.Get("u1")
	if w := st.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "ContainerCreating" {
		t.Errorf("after recovery waiting = %+v, want ContainerCreating", w)
	}
}

func TestRuntimeErrorIsReturned(t *testing.T) {
	f := newFixture(t)
	f.rt.err = errors.New("sandbox creation failed")
	if _, err := f.s.SyncPod(f.ctx, podworker.SyncPodCreate, testPod(corev1.RestartPolicyAlways), nil); err == nil {
		t.Fatal("want the runtime's error")
	}
}

func TestTermination(t *testing.T) {
	for _, tc := range []struct {
		name      string
		desired   bool
		wantCalls []string
		wantDir   bool
		// wantGone: SyncTerminatedPod reports the pod gone (its worker
		// then tells the route, which drops the status: not podsync).
		wantGone bool
	}{
		{name: "still desired keeps containers for logs", desired: true,
			wantCalls: []string{"kill web grace=3s", "status u1"}, wantDir: true},
		{name: "removed pod is cleaned up", desired: false,
			wantCalls: []string{"kill web grace=3s", "status u1", "remove u1"}, wantDir: false, wantGone: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.desired["u1"] = tc.desired
			pod := testPod(corev1.RestartPolicyAlways)
			if _, err := f.s.SyncPod(f.ctx, podworker.SyncPodCreate, pod, &runtimestate.Pod{UID: "u1"}); err != nil {
				t.Fatal(err)
			}
			f.rt.calls = nil
			f.rt.after = exited(137)
			if err := f.s.SyncTerminatingPod(f.ctx, pod, running(), podworker.Kill{GracePeriod: 3}); err != nil {
				t.Fatal(err)
			}
			// A killed pod is terminal: Always restarts nothing any more.
			if st, ok := f.store.Get("u1"); !ok || st.Phase != corev1.PodFailed {
				t.Errorf("phase after termination = %q, want Failed", st.Phase)
			}
			gone, err := f.s.SyncTerminatedPod(f.ctx, pod, exited(137))
			if err != nil {
				t.Fatal(err)
			}
			if gone != tc.wantGone {
				t.Errorf("SyncTerminatedPod gone = %v, want %v", gone, tc.wantGone)
			}
			if diff := cmp.Diff(tc.wantCalls, f.rt.calls); diff != "" {
				t.Errorf("runtime calls (-want +got):\n%s", diff)
			}
			if _, err := os.Stat(f.s.PodDir("u1")); (err == nil) != tc.wantDir {
				t.Errorf("pod directory exists = %v, want %v", err == nil, tc.wantDir)
			}
			if _, ok := f.store.Get("u1"); !ok {
				t.Error("SyncTerminatedPod dropped the status: that is the route's (podgone)")
			}
			if len(f.s.records) != 0 {
				t.Errorf("records left after the last sync: %v", f.s.records)
			}
		})
	}
}

func TestOrphanIsKilledAndRemoved(t *testing.T) {
	f := newFixture(t)
	if err := f.s.SyncTerminatingRuntimePod(f.ctx, exited(137)); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"kill u1 grace=nil", "remove u1"}, f.rt.calls); diff != "" {
		t.Errorf("runtime calls (-want +got):\n%s", diff)
	}
}

func running() *runtimestate.Pod {
	p := exited(0)
	p.Containers[0].State = runtimestate.ContainerRunning
	p.Containers[0].FinishedAt = time.Time{}
	return p
}

// probes is an in-test Prober: it logs calls and returns a canned snapshot.
type probes struct {
	calls []string
	snap  prober.Snapshot
}

func (p *probes) AddPod(pod *corev1.Pod) { p.calls = append(p.calls, "add "+string(pod.UID)) }
func (p *probes) StopLivenessAndStartup(uid types.UID) {
	p.calls = append(p.calls, "stop "+string(uid))
}
func (p *probes) RemovePod(uid types.UID) { p.calls = append(p.calls, "remove "+string(uid)) }
func (p *probes) Snapshot(*corev1.Pod, *runtimestate.Pod) prober.Snapshot {
	return p.snap
}

func TestProbesReachPlanAndStatus(t *testing.T) {
	f := newFixture(t)
	pr := &probes{snap: prober.Snapshot{
		Plan:      podplan.ProbeSnapshot{LivenessFailed: map[string]bool{"c1": true}},
		Readiness: map[string]bool{"web": false},
	}}
	f.s.cfg.Prober = pr
	pod := testPod(corev1.RestartPolicyAlways)
	if _, err := f.s.SyncPod(f.ctx, podworker.SyncPodSync, pod, running()); err != nil {
		t.Fatal(err)
	}
	// The liveness verdict reached the plan that was applied.
	wantKill := map[podplan.ContainerRef]podplan.KillReason{{ID: "c1", Name: "web"}: {
		Reason: podplan.KillReasonLivenessProbe, Message: "Container web failed liveness probe, will be restarted"}}
	if diff := cmp.Diff(wantKill, f.rt.plan.KillContainers); diff != "" {
		t.Errorf("applied plan's kills (-want +got):\n%s", diff)
	}
	st, _ := f.store.Get("u1")
	if cs := st.ContainerStatuses[0]; cs.Ready {
		t.Errorf("container ready with a failing readiness probe: %+v", cs)
	}
	pr.snap.Readiness["web"] = true
	if _, err := f.s.SyncPod(f.ctx, podworker.SyncPodSync, pod, running()); err != nil {
		t.Fatal(err)
	}
	if st, _ := f.store.Get("u1"); !st.ContainerStatuses[0].Ready {
		t.Errorf("container not ready with a passing readiness probe: %+v", st.ContainerStatuses[0])
	}
	f.rt.after = exited(137)
	if err := f.s.SyncTerminatingPod(f.ctx, pod, running(), podworker.Kill{GracePeriod: 3}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.SyncTerminatedPod(f.ctx, pod, exited(137)); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"add u1", "add u1", "stop u1", "remove u1"}, pr.calls); diff != "" {
		t.Errorf("prober calls (-want +got):\n%s", diff)
	}
}

// objectsLog is an in-test Objects that logs into the runtime's calls, so
// a test sees registrations in order with the runtime's work.
type objectsLog struct{ calls *[]string }

func (o objectsLog) RegisterPod(pod *corev1.Pod) { *o.calls = append(*o.calls, "register "+pod.Name) }
func (o objectsLog) UnregisterPod(pod *corev1.Pod) {
	*o.calls = append(*o.calls, "unregister "+pod.Name)
}

// TestObjectsFollowThePodsLife checks the one place pods are registered
// with the configMap and secret source: before a sync reads them, and not
// after the pod terminated.
func TestObjectsFollowThePodsLife(t *testing.T) {
	for _, tc := range []struct {
		name    string
		desired bool
	}{{"still desired", true}, {"removed", false}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.s.cfg.Objects = objectsLog{calls: &f.rt.calls}
			f.desired["u1"] = tc.desired
			pod := testPod(corev1.RestartPolicyAlways)
			if _, err := f.s.SyncPod(f.ctx, podworker.SyncPodCreate, pod, &runtimestate.Pod{UID: "u1"}); err != nil {
				t.Fatal(err)
			}
			if _, err := f.s.SyncPod(f.ctx, podworker.SyncPodUpdate, pod, running()); err != nil {
				t.Fatal(err)
			}
			f.rt.after = exited(137)
			if err := f.s.SyncTerminatingPod(f.ctx, pod, running(), podworker.Kill{GracePeriod: 3}); err != nil {
				t.Fatal(err)
			}
			if _, err := f.s.SyncTerminatedPod(f.ctx, pod, exited(137)); err != nil {
				t.Fatal(err)
			}
			want := []string{"register web", "sync web", "register web", "sync web", "kill web grace=3s", "status u1", "unregister web"}
			if !tc.desired {
				want = append(want, "remove u1")
			}
			if diff := cmp.Diff(want, f.rt.calls); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTerminalPodIsNotRegistered(t *testing.T) {
	f := newFixture(t)
	f.s.cfg.Objects = objectsLog{calls: &f.rt.calls}
	res, err := f.s.SyncPod(f.ctx, podworker.SyncPodSync, testPod(corev1.RestartPolicyNever), exited(0))
	outcome := res.Outcome
	if err != nil || outcome != podworker.SyncTerminal {
		t.Fatalf("SyncPod = %v, %v; want terminal", outcome, err)
	}
	if len(f.rt.calls) != 0 {
		t.Errorf("calls = %v, want none for a pod that already ended", f.rt.calls)
	}
}

// TestTerminationReasonInStatus: a kill with a reason (a node shutdown)
// gives the pod upstream's status from the kill on, through its final
// status once terminated: Failed, the reason and message, and a True
// DisruptionTarget.
func TestTerminationReasonInStatus(t *testing.T) {
	const msg = "Pod was terminated in response to imminent node shutdown."
	f := newFixture(t)
	f.desired["u1"] = true
	pod := testPod(corev1.RestartPolicyAlways)
	if _, err := f.s.SyncPod(f.ctx, podworker.SyncPodCreate, pod, &runtimestate.Pod{UID: "u1"}); err != nil {
		t.Fatal(err)
	}
	f.rt.after = exited(0)
	check := func(when string) {
		t.Helper()
		st, _ := f.store.Get("u1")
		if st.Phase != corev1.PodFailed || st.Reason != "Terminated" || st.Message != msg {
			t.Errorf("%s: phase %q reason %q message %q; want Failed, Terminated, %q", when, st.Phase, st.Reason, st.Message, msg)
		}
		var found bool
		for _, c := range st.Conditions {
			found = found || (c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue && c.Reason == corev1.PodReasonTerminationByKubelet)
		}
		if !found {
			t.Errorf("%s: no True DisruptionTarget condition in %+v", when, st.Conditions)
		}
	}
	if err := f.s.SyncTerminatingPod(f.ctx, pod, running(), podworker.Kill{GracePeriod: 3, Reason: "Terminated", Message: msg}); err != nil {
		t.Fatal(err)
	}
	check("after the kill")
	if _, err := f.s.SyncTerminatedPod(f.ctx, pod, exited(0)); err != nil {
		t.Fatal(err)
	}
	check("once terminated")
}

// usernsLog records the pods whose user namespace IDs were released.
type usernsLog struct{ released []types.UID }

func (u *usernsLog) Release(_ context.Context, uid types.UID) { u.released = append(u.released, uid) }

// TestTerminatedPodReleasesItsUserNamespace: a terminated pod's user
// namespace IDs are freed whether a source still wants the pod or not, as
// upstream's syncTerminatedPod, and not before.
func TestTerminatedPodReleasesItsUserNamespace(t *testing.T) {
	for _, desired := range []bool{true, false} {
		f := newFixture(t)
		users := &usernsLog{}
		f.s.cfg.UserNamespaces = users
		pod := testPod(corev1.RestartPolicyNever)
		f.desired[pod.UID] = desired
		if _, err := f.s.SyncPod(f.ctx, podworker.SyncPodSync, pod, running()); err != nil {
			t.Fatal(err)
		}
		f.rt.after = exited(0)
		if err := f.s.SyncTerminatingPod(f.ctx, pod, running(), podworker.Kill{GracePeriod: 3}); err != nil {
			t.Fatal(err)
		}
		if len(users.released) != 0 {
			t.Errorf("desired %v: released %v before the pod terminated", desired, users.released)
		}
		if _, err := f.s.SyncTerminatedPod(f.ctx, pod, exited(0)); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]types.UID{"u1"}, users.released); diff != "" {
			t.Errorf("desired %v: released (-want +got):\n%s", desired, diff)
		}
	}
}

// deviceHealth is a device manager whose container web of pod u1 holds
// one unhealthy device.
type deviceHealth struct{}

func (deviceHealth) ResourceHealth(podUID, container string) []corev1.ResourceStatus {
	if podUID != "u1" || container != "web" {
		return nil
	}
	return []corev1.ResourceStatus{{Name: "example.com/dev", Resources: []corev1.ResourceHealth{{ResourceID: "d1", Health: corev1.ResourceHealthStatusUnhealthy}}}}
}

// TestDeviceHealthReachesStatus: the device manager's health of a
// container's devices is in its allocatedResourcesStatus.
func TestDeviceHealthReachesStatus(t *testing.T) {
	f := newFixture(t)
	f.s.cfg.Health.Devices = deviceHealth{}
	pod := testPod(corev1.RestartPolicyAlways)
	if _, err := f.s.SyncPod(f.ctx, podworker.SyncPodCreate, pod, exited(0)); err != nil {
		t.Fatal(err)
	}
	st, _ := f.store.Get("u1")
	if len(st.ContainerStatuses) != 1 {
		t.Fatalf("container statuses %+v", st.ContainerStatuses)
	}
	want := deviceHealth{}.ResourceHealth("u1", "web")
	if d := cmp.Diff(want, st.ContainerStatuses[0].AllocatedResourcesStatus); d != "" {
		t.Errorf("allocatedResourcesStatus (-want +got):\n%s", d)
	}
}

// claimHealth is a DRA manager whose claim "gpu" of container web holds
// one unhealthy device, for any pod.
type claimHealth struct{}

func (claimHealth) ClaimHealth(pod *corev1.Pod, c *corev1.Container) []corev1.ResourceStatus {
	if c.Name != "web" {
		return nil
	}
	return []corev1.ResourceStatus{{Name: "claim:gpu", Resources: []corev1.ResourceHealth{{ResourceID: "cdi=0", Health: corev1.ResourceHealthStatusUnhealthy}}}}
}

// TestClaimHealthReachesStatus: the DRA manager's health of a
// container's claims follows the device manager's in its
// allocatedResourcesStatus.
func TestClaimHealthReachesStatus(t *testing.T) {
	f := newFixture(t)
	f.s.cfg.Health.Devices = deviceHealth{}
	f.s.cfg.Health.Claims = claimHealth{}
	pod := testPod(corev1.RestartPolicyAlways)
	pod.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu"}}
	pod.Spec.Containers[0].Resources.Claims = []corev1.ResourceClaim{{Name: "gpu"}}
	if _, err := f.s.SyncPod(f.ctx, podworker.SyncPodCreate, pod, exited(0)); err != nil {
		t.Fatal(err)
	}
	st, _ := f.store.Get("u1")
	if len(st.ContainerStatuses) != 1 {
		t.Fatalf("container statuses %+v", st.ContainerStatuses)
	}
	want := append(deviceHealth{}.ResourceHealth("u1", "web"), claimHealth{}.ClaimHealth(pod, &pod.Spec.Containers[0])...)
	if d := cmp.Diff(want, st.ContainerStatuses[0].AllocatedResourcesStatus); d != "" {
		t.Errorf("allocatedResourcesStatus (-want +got):\n%s", d)
	}
}
