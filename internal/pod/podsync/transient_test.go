package podsync

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/platform/cri"
	"github.com/berthk8s/berth/internal/pod/podworker"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
	"github.com/berthk8s/berth/internal/volumes/objectcache"
	"github.com/berthk8s/berth/internal/volumes/volume"
)

// memMounter pretends to mount tmpfs and binds.
type memMounter struct {
	mu     sync.Mutex // guards mounts
	mounts map[string]bool
}

func (m *memMounter) MountTmpfs(target string, _ int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mounts[target] = true
	return nil
}

func (m *memMounter) FormatAndMount(_, target, _ string, _ []string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mounts[target] = true
	return nil
}

func (m *memMounter) MountHugetlbfs(target, _ string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mounts[target] = true
	return nil
}

func (m *memMounter) MountNFS(_, target string, _ []string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mounts[target] = true
	return nil
}

func (m *memMounter) BindMount(_, target string, _ bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mounts[target] = true
	return nil
}

func (m *memMounter) Unmount(target string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.mounts, target)
	return nil
}

func (m *memMounter) IsMountPoint(path string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mounts[path], nil
}

// MountSource is "": these tests mount no disks.
func (m *memMounter) MountSource(string) (string, error) { return "", nil }

// events records FailedMount warnings.
type events struct {
	mu      sync.Mutex // guards reasons
	reasons []string
}

func (e *events) Eventf(_ *corev1.Pod, _, reason, _ string, _ ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.reasons = append(e.reasons, reason)
}

// The node authorizer refuses the first two token requests of a pod just
// bound to the node: the sync still succeeds, a few hundred milliseconds
// later, with no FailedMount event and no error for the worker's back-off.
func TestSyncPodSurvivesForbiddenTokenRightAfterBinding(t *testing.T) {
	f := newFixture(t)
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	client := fake.NewClientset(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kube-root-ca.crt", Namespace: "default"}, Data: map[string]string{"ca.crt": "PEM"}})
	var mu sync.Mutex
	requests := 0
	client.PrependReactor("create", "serviceaccounts", func(a k8stesting.Action) (bool, k8sruntime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		if requests++; requests <= 2 {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "serviceaccounts"}, "default",
				errors.New(`no relationship found between node 'n1' and this object`))
		}
		tr := a.(k8stesting.CreateAction).GetObject().(*authenticationv1.TokenRequest).DeepCopy()
		tr.Status = authenticationv1.TokenRequestStatus{Token: "jwt", ExpirationTimestamp: metav1.NewTime(clk.Now().Add(time.Hour))}
		return true, tr, nil
	})
	objects, err := objectcache.New(objectcache.Config{Client: client, Strategy: "Get", Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	rec := &events{}
	vm, err := volume.New(volume.Config{PodsDir: f.s.cfg.PodsDir, Client: client, Objects: objects, Clock: clk,
		Recorder: rec, Mounter: &memMounter{mounts: map[string]bool{}}})
	if err != nil {
		t.Fatal(err)
	}
	f.s.cfg.Volumes = vm
	pod := testPod(corev1.RestartPolicyAlways)
	pod.Spec.Volumes = []corev1.Volume{{Name: "kube-api-access-x", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](3607)}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"}}},
		},
	}}}}

	type result struct {
		outcome podworker.SyncOutcome
		err     error
	}
	done := make(chan result, 1)
	start := clk.Now()
	go func() {
		outcome, err := f.s.SyncPod(f.ctx, podworker.SyncPodCreate, pod, &runtimestate.Pod{UID: "u1"})
		done <- result{outcome.Outcome, err}
	}()
	var res result
	for waiting := true; waiting; {
		select {
		case res = <-done:
			waiting = false
		default:
			if clk.HasWaiters() {
				clk.Step(100 * time.Millisecond)
			}
			time.Sleep(time.Millisecond)
		}
	}
	if res.err != nil || res.outcome != podworker.SyncSteady {
		t.Fatalf("SyncPod = %v, %v; want steady, nil (no back-off)", res.outcome, res.err)
	}
	if took := clk.Since(start); took >= time.Second {
		t.Errorf("SyncPod took %v of the clock, want under a second", took)
	}
	if requests != 3 {
		t.Errorf("token requests = %d, want 3", requests)
	}
	if diff := cmp.Diff([]string{"sync web"}, f.rt.calls); diff != "" {
		t.Errorf("runtime calls (-want +got):\n%s", diff)
	}
	if len(rec.reasons) != 0 {
		t.Errorf("events %v, want none (the failure did not persist)", rec.reasons)
	}
}

// TestFailuresErrorInProgress: a start the runtime refused while it was
// still serving an earlier request makes the sync's error one of
// cri.ErrInProgress, which the pod worker retries soon; other failures do
// not.
func TestFailuresErrorInProgress(t *testing.T) {
	plain := map[string]runtimestate.StartFailure{"app": {Reason: "RunContainerError", Message: "exec format error"}}
	if err := failuresError(plain); errors.Is(err, cri.ErrInProgress) {
		t.Errorf("failuresError(%v) = %v, an ErrInProgress", plain, err)
	}
	busy := map[string]runtimestate.StartFailure{
		"app":  {Reason: "RunContainerError", Message: "container is already in starting state", InProgress: true},
		"side": {Reason: "CrashLoopBackOff", Message: "back-off 10s"},
	}
	err := failuresError(busy)
	if !errors.Is(err, cri.ErrInProgress) {
		t.Errorf("failuresError(%v) = %v, want an ErrInProgress", busy, err)
	}
	const want = `container "app": RunContainerError: container is already in starting state; container "side": CrashLoopBackOff: back-off 10s (request in progress)`
	if err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
}
