package kuberuntime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/berthk8s/berth/internal/platform/cri"
	"github.com/berthk8s/berth/internal/platform/cri/crifake"
	"github.com/berthk8s/berth/internal/pod/podplan"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// events records events as "Type Reason message".
type events struct {
	mu  sync.Mutex
	all []string
}

func (e *events) ContainerEventf(pod *corev1.Pod, _, eventType, reason, messageFmt string, args ...any) {
	e.Eventf(pod, eventType, reason, messageFmt, args...)
}

func (e *events) Eventf(_ *corev1.Pod, eventType, reason, messageFmt string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.all = append(e.all, eventType+" "+reason+" "+fmt.Sprintf(messageFmt, args...))
}

// take returns the events recorded since the last take.
func (e *events) take() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := e.all
	e.all = nil
	return out
}

// env is a Manager over a crifake runtime with a fake clock.
type env struct {
	t      *testing.T
	ctx    context.Context
	m      *Manager
	fake   *crifake.Fake
	clock  *testingclock.FakeClock
	events *events
	logs   string
	pods   string
	// crash and pulls are the back-offs a pod's sync keeps between syncs
	// (internal/pod/podsync in berth), by pod UID.
	crash map[types.UID]map[string]podplan.BackoffEntry
	pulls map[types.UID]PullBackoffs
}

func newEnv(t *testing.T, opts ...func(*Config)) *env {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	clk := testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	fake := crifake.New(clk)
	client := fake.Client(t)
	dir := t.TempDir()
	resolv := filepath.Join(dir, "resolv.conf")
	if err := os.WriteFile(resolv, []byte("nameserver 10.0.0.2\nsearch example.com\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, ctx: ctx, fake: fake, clock: clk, events: &events{},
		logs: filepath.Join(dir, "logs"), pods: filepath.Join(dir, "pods"),
		crash: map[types.UID]map[string]podplan.BackoffEntry{}, pulls: map[types.UID]PullBackoffs{}}
	hosts := filepath.Join(dir, "hosts")
	if err := os.WriteFile(hosts, []byte("127.0.0.1\tlocalhost node\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		Runtime: client.Runtime, Images: client.Image, Clock: clk, Recorder: e.events,
		PodLogsDir: e.logs, PodsDir: e.pods, ResolvConf: resolv,
		ClusterDNS: []string{"10.96.0.10"}, ClusterDomain: "cluster.local", NodeHostsFile: hosts,
		KubernetesVersion: "v1.37.2",
	}
	for _, o := range opts {
		o(&cfg)
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.m = m
	return e
}

// status reads the pod's full runtime status.
func (e *env) status(pod *corev1.Pod) *runtimestate.Pod {
	e.t.Helper()
	rt, err := e.m.PodStatus(e.ctx, pod.UID, pod.Name, pod.Namespace)
	if err != nil {
		e.t.Fatalf("PodStatus: %v", err)
	}
	return rt
}

// sync runs one sync over the current status and returns the failures
// (start failures and the plan's waiting reasons).
func (e *env) sync(pod *corev1.Pod) map[string]runtimestate.StartFailure {
	e.t.Helper()
	res, err := e.apply(pod, e.status(pod), nil, nil)
	if err != nil {
		e.t.Fatalf("Apply: %v", err)
	}
	return res.Failures
}

// apply does what a pod's sync does around Apply: compute the plan over rt
// with the kept back-off and the probe verdicts, apply it, keep the new
// back-offs. The plan's waiting reasons are added to the result's failures.
func (e *env) apply(pod *corev1.Pod, rt *runtimestate.Pod, probes *podplan.ProbeSnapshot, volumes map[string]string) (Result, error) {
	return e.applyWith(pod, rt, probes, ApplyOptions{Volumes: volumes})
}

// applyWith is apply with the volume manager's options given whole.
func (e *env) applyWith(pod *corev1.Pod, rt *runtimestate.Pod, probes *podplan.ProbeSnapshot, opts ApplyOptions) (Result, error) {
	in := podplan.Inputs{Pod: pod, Runtime: rt, Backoff: e.crash[pod.UID], Now: e.clock.Now()}
	if probes != nil {
		in.Probes = *probes
	}
	plan := podplan.Compute(in)
	e.crash[pod.UID] = plan.Backoff
	opts.Pulls = e.pulls[pod.UID]
	res, err := e.m.Apply(e.ctx, pod, rt, plan, opts)
	e.pulls[pod.UID] = res.Pulls
	for name, w := range plan.Waiting {
		res.Failures[name] = runtimestate.StartFailure{Reason: w.Reason, Message: w.Message}
	}
	return res, err
}

// running returns the running container of the given name, or fails.
func (e *env) running(pod *corev1.Pod, name string) runtimestate.Container {
	e.t.Helper()
	c := e.status(pod).LatestContainer(name)
	if c == nil || c.State != runtimestate.ContainerRunning {
		e.t.Fatalf("container %q is not running: %+v", name, c)
	}
	return *c
}

func hasEvent(events []string, prefix string) bool {
	return slices.ContainsFunc(events, func(e string) bool { return strings.HasPrefix(e, prefix) })
}

func TestNewValidates(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Fatal("New(Config{}) succeeded")
	}
}

func TestSyncPodFreshPod(t *testing.T) {
	e := newEnv(t)
	e.fake.AddImage("busybox:1.36")
	pod := basePod()
	if f := e.sync(pod); len(f) != 0 {
		t.Fatalf("failures: %v", f)
	}
	rt := e.status(pod)
	if len(rt.Sandboxes) != 1 || rt.Sandboxes[0].State != runtimestate.SandboxReady || len(rt.Sandboxes[0].IPs) == 0 {
		t.Fatalf("sandboxes = %+v, want one ready with an IP", rt.Sandboxes)
	}
	c := e.running(pod, "app")
	if c.SandboxID != rt.Sandboxes[0].ID || c.RestartCount != 0 || c.Hash != podplan.HashContainer(&pod.Spec.Containers[0]) {
		t.Errorf("container = %+v", c)
	}
	wantLog := filepath.Join(e.logs, "default_web_uid-1", "app", "0.log")
	if c.LogPath != wantLog {
		t.Errorf("log path = %q, want %q", c.LogPath, wantLog)
	}
	if fi, err := os.Stat(filepath.Dir(wantLog)); err != nil || !fi.IsDir() {
		t.Errorf("container log directory not created: %v", err)
	}
	if _, err := os.Stat(filepath.Join(e.pods, "uid-1", "containers", "app", "0")); err != nil {
		t.Errorf("termination message file not created: %v", err)
	}
	want := []string{
		`Normal Pulled Container image "busybox:1.36" already present on machine`,
		"Normal Created Created container: app",
		"Normal Started Started container app",
	}
	if got := e.events.take(); !slices.Equal(got, want) {
		t.Errorf("events = %q, want %q", got, want)
	}
	// A second sync with nothing to do does nothing.
	e.fake.ResetCalls()
	e.sync(pod)
	for _, call := range e.fake.Calls() {
		if call != "ListPodSandbox" && call != "ListContainers" && call != "PodSandboxStatus" && call != "ContainerStatus" {
			t.Errorf("idle sync called %s", call)
		}
	}
}

func TestSyncPodImageNeverAbsent(t *testing.T) {
	e := newEnv(t)
	pod := basePod()
	pod.Spec.Containers[0].ImagePullPolicy = corev1.PullNever
	f := e.sync(pod)
	want := runtimestate.StartFailure{Reason: ReasonErrImageNeverPull, Message: `Container image "busybox:1.36" is not present with pull policy of Never`}
	if f["app"] != want {
		t.Errorf("failure = %+v, want %+v", f["app"], want)
	}
	if !hasEvent(e.events.take(), "Warning ErrImageNeverPull ") {
		t.Error("no ErrImageNeverPull event")
	}
}

func TestSyncPodPullBackoff(t *testing.T) {
	e := newEnv(t)
	pod := basePod()
	if f := e.sync(pod)["app"]; f.Reason != ReasonErrImagePull || !strings.Contains(f.Message, "not found") {
		t.Fatalf("first sync failure = %+v, want ErrImagePull", f)
	}
	evs := e.events.take()
	for _, want := range []string{`Normal Pulling Pulling image "busybox:1.36"`, `Warning Failed Failed to pull image "busybox:1.36": `, "Warning Failed Error: ErrImagePull"} {
		if !hasEvent(evs, want) {
			t.Errorf("events %q lack %q", evs, want)
		}
	}
	e.clock.Step(5 * time.Second)
	want := runtimestate.StartFailure{Reason: ReasonImagePullBackOff, Message: `Back-off pulling image "busybox:1.36"`}
	if f := e.sync(pod)["app"]; f != want {
		t.Fatalf("in back-off: failure = %+v, want %+v", f, want)
	}
	if evs := e.events.take(); !hasEvent(evs, `Normal BackOff Back-off pulling image "busybox:1.36"`) {
		t.Errorf("events %q lack the BackOff event", evs)
	}
	e.clock.Step(5 * time.Second) // 10 s after the failure: pull again, fail again
	if f := e.sync(pod)["app"]; f.Reason != ReasonErrImagePull {
		t.Fatalf("after 10 s: failure = %+v, want ErrImagePull", f)
	}
	e.clock.Step(15 * time.Second) // the delay doubled to 20 s
	if f := e.sync(pod)["app"]; f.Reason != ReasonImagePullBackOff {
		t.Fatalf("15 s after the second failure: failure = %+v, want ImagePullBackOff", f)
	}
	e.fake.AllowPull("busybox:1.36")
	e.clock.Step(5 * time.Second)
	if f := e.sync(pod); len(f) != 0 {
		t.Fatalf("after the back-off with a pullable image: failures %v", f)
	}
	e.running(pod, "app")
	if evs := e.events.take(); !hasEvent(evs, `Normal Pulled Successfully pulled image "busybox:1.36" in 0s (0s including waiting). Image size: `) {
		t.Errorf("events %q lack the Pulled event", evs)
	}
}

func TestSyncPodCrashLoop(t *testing.T) {
	e := newEnv(t)
	e.fake.AddImage("busybox:1.36")
	pod := basePod()
	e.sync(pod)
	first := e.running(pod, "app")
	if err := e.fake.ExitContainer(first.ID, 1, ""); err != nil {
		t.Fatal(err)
	}
	e.clock.Step(time.Second)
	if f := e.sync(pod); len(f) != 0 {
		t.Fatalf("first restart: failures %v", f)
	}
	second := e.running(pod, "app")
	if second.RestartCount != 1 || second.ID == first.ID {
		t.Fatalf("restarted container = %+v, want restart count 1", second)
	}
	if err := e.fake.ExitContainer(second.ID, 1, ""); err != nil {
		t.Fatal(err)
	}
	e.clock.Step(time.Second)
	e.events.take()
	f := e.sync(pod)["app"]
	if f.Reason != podplan.WaitingReasonCrashLoopBackOff || !strings.Contains(f.Message, "back-off 10s restarting failed container=app") {
		t.Fatalf("failure = %+v, want CrashLoopBackOff 10s", f)
	}
	if evs := e.events.take(); !hasEvent(evs, "Warning BackOff Back-off restarting failed container app in pod web_default(uid-1)") {
		t.Errorf("events %q lack the BackOff event", evs)
	}
	e.clock.Step(10 * time.Second)
	if f := e.sync(pod); len(f) != 0 {
		t.Fatalf("after the back-off: failures %v", f)
	}
	if third := e.running(pod, "app"); third.RestartCount != 2 {
		t.Errorf("restart count = %d, want 2", third.RestartCount)
	}
	// Apply removes no exited instance: that is the container GC's
	// (internal/node/gc), every minute.
	var exited int
	for _, c := range e.status(pod).Containers {
		if c.State == runtimestate.ContainerExited {
			exited++
		}
	}
	if exited != 2 {
		t.Errorf("exited containers kept = %d, want 2", exited)
	}
}

func TestSyncPodSpecChange(t *testing.T) {
	e := newEnv(t)
	e.fake.AddImage("busybox:1.36")
	e.fake.AddImage("busybox:1.37")
	pod := basePod()
	e.sync(pod)
	old := e.running(pod, "app")
	e.events.take()
	pod.Spec.Containers[0].Image = "busybox:1.37"
	e.sync(pod)
	evs := e.events.take()
	if !hasEvent(evs, "Normal Killing Container app definition changed, will be restarted") {
		t.Errorf("events %q lack the Killing event", evs)
	}
	// Upstream kills and restarts in the same sync.
	c := e.running(pod, "app")
	if c.ID == old.ID || c.Hash != podplan.HashContainer(&pod.Spec.Containers[0]) || c.RestartCount != 1 {
		t.Errorf("after spec change: %+v", c)
	}
	if c.Image != "docker.io/library/busybox:1.37" {
		t.Errorf("image = %q", c.Image)
	}
}

func TestSyncPodConfigError(t *testing.T) {
	e := newEnv(t)
	e.fake.AddImage("busybox:1.36")
	pod := basePod()
	pod.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "X", ValueFrom: &corev1.EnvVarSource{
		ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}, Key: "k"},
	}}}
	const msg = "couldn't get configMap default/cm: configMap references need an API server"
	f := e.sync(pod)["app"]
	if f.Reason != ReasonCreateContainerConfigError || f.Message != msg {
		t.Errorf("failure = %+v", f)
	}
	if evs := e.events.take(); !hasEvent(evs, "Warning Failed Error: "+msg) {
		t.Errorf("events %q lack the Failed event", evs)
	}
}

func TestSyncPodSandboxFailure(t *testing.T) {
	e := newEnv(t)
	e.fake.InjectError("RunPodSandbox", fmt.Errorf("network plugin not ready"))
	pod := basePod()
	res, err := e.apply(pod, e.status(pod), nil, nil)
	if err == nil {
		t.Fatal("Apply succeeded though RunPodSandbox failed")
	}
	if evs := e.events.take(); !hasEvent(evs, "Warning FailedCreatePodSandBox Failed to create pod sandbox: network plugin not ready") {
		t.Errorf("events %q lack FailedCreatePodSandBox", evs)
	}
	want := &runtimestate.StartFailure{Reason: ReasonSandboxCreateFailed, Message: "creating the pod sandbox failed: network plugin not ready"}
	if diff := cmp.Diff(want, res.Sandbox); diff != "" {
		t.Errorf("Result.Sandbox (-want +got):\n%s", diff)
	}
}

// TestSyncPodSandboxNameReserved: containerd still creating the pod's
// sandbox for a request from before berth restarted answers a new one
// with its name reserved; the sync's error says so (ErrInProgress, which
// the pod worker retries within a second rather than after its 10 s
// backoff).
func TestSyncPodSandboxNameReserved(t *testing.T) {
	e := newEnv(t)
	const msg = `failed to reserve sandbox name "web_default_u1_0": name "web_default_u1_0" is reserved for "a8ff6695"`
	e.fake.InjectError("RunPodSandbox", status.Error(codes.Unknown, msg))
	pod := basePod()
	_, err := e.apply(pod, e.status(pod), nil, nil)
	if !errors.Is(err, cri.ErrInProgress) {
		t.Fatalf("Apply = %v, want an error of cri.ErrInProgress", err)
	}
	if _, err := e.apply(pod, e.status(pod), nil, nil); err != nil {
		t.Errorf("Apply once the name is free: %v", err)
	}
}

// TestSyncPodContainerInProgress: a container containerd is still starting
// for a request from before berth restarted fails the new start with its
// RunContainerError, marked InProgress (the pod worker retries it soon); a
// failure of another kind is not.
func TestSyncPodContainerInProgress(t *testing.T) {
	e := newEnv(t)
	e.fake.AddImage("busybox:1.36")
	e.fake.InjectError("StartContainer", status.Error(codes.Unknown, `failed to set starting state for container "c1": container is already in starting state`))
	pod := basePod()
	res, err := e.apply(pod, e.status(pod), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	f, ok := res.Failures["app"]
	if !ok || f.Reason != ReasonRunContainerError || !f.InProgress {
		t.Errorf("failure of app = %+v (%v), want RunContainerError, InProgress", f, ok)
	}
	e2 := newEnv(t)
	e2.fake.AddImage("busybox:1.36")
	e2.fake.InjectError("StartContainer", status.Error(codes.Unknown, "exec format error"))
	res, err = e2.apply(pod, e2.status(pod), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f := res.Failures["app"]; f.Reason != ReasonRunContainerError || f.InProgress {
		t.Errorf("failure of app = %+v, want RunContainerError, not InProgress", f)
	}
}

// TestSyncPodNetworkSetupFailure: a sandbox whose CNI set-up fails (as
// containerd says it) is reported as the network's failure.
func TestSyncPodNetworkSetupFailure(t *testing.T) {
	e := newEnv(t)
	e.fake.SetNetworkReady(false)
	pod := basePod()
	res, err := e.apply(pod, e.status(pod), nil, nil)
	if err == nil {
		t.Fatal("Apply succeeded though the network is not ready")
	}
	if res.Sandbox == nil || res.Sandbox.Reason != ReasonNetworkSetupFailed ||
		!strings.HasPrefix(res.Sandbox.Message, "setting up the pod network failed: failed to setup network for sandbox") {
		t.Errorf("Result.Sandbox = %+v, want %s", res.Sandbox, ReasonNetworkSetupFailed)
	}
	e.fake.SetNetworkReady(true)
	if res, err := e.apply(pod, e.status(pod), nil, nil); err != nil || res.Sandbox != nil {
		t.Errorf("after the network is ready: Sandbox %+v, err %v", res.Sandbox, err)
	}
}

func TestSyncPodSandboxChanged(t *testing.T) {
	e := newEnv(t)
	e.fake.AddImage("busybox:1.36")
	pod := basePod()
	e.sync(pod)
	old := e.status(pod).Sandboxes[0]
	if err := e.fake.SetSandboxNotReady(old.ID); err != nil {
		t.Fatal(err)
	}
	e.events.take()
	e.clock.Step(time.Second)
	if f := e.sync(pod); len(f) != 0 {
		t.Fatalf("failures %v", f)
	}
	if evs := e.events.take(); !hasEvent(evs, "Normal SandboxChanged Pod sandbox changed, it will be killed and re-created.") {
		t.Errorf("events %q lack SandboxChanged", evs)
	}
	rt := e.status(pod)
	if len(rt.Sandboxes) != 2 || rt.Sandboxes[0].Attempt != 1 || rt.Sandboxes[0].State != runtimestate.SandboxReady {
		t.Fatalf("sandboxes = %+v, want a new ready one with attempt 1", rt.Sandboxes)
	}
	if c := e.running(pod, "app"); c.SandboxID != rt.Sandboxes[0].ID {
		t.Errorf("container runs in %s, want the new sandbox", c.SandboxID)
	}
}

func TestSyncPodInitContainers(t *testing.T) {
	e := newEnv(t)
	e.fake.AddImage("busybox:1.36")
	pod := basePod()
	pod.Spec.InitContainers = []corev1.Container{{
		Name: "init", Image: "busybox:1.36", ImagePullPolicy: corev1.PullIfNotPresent,
		TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile,
	}}
	e.sync(pod)
	init := e.running(pod, "init")
	if e.status(pod).LatestContainer("app") != nil {
		t.Fatal("regular container started before the init container finished")
	}
	if err := e.fake.ExitContainer(init.ID, 0, ""); err != nil {
		t.Fatal(err)
	}
	if f := e.sync(pod); len(f) != 0 {
		t.Fatalf("failures %v", f)
	}
	e.running(pod, "app")
}

func TestSyncPodHostNetwork(t *testing.T) {
	e := newEnv(t)
	e.fake.AddImage("busybox:1.36")
	pod := basePod()
	pod.Spec.HostNetwork = true
	e.sync(pod)
	sb := e.status(pod).LatestSandbox()
	if sb == nil || !sb.HostNetwork || len(sb.IPs) != 0 {
		t.Fatalf("sandbox = %+v, want host network without pod IPs", sb)
	}
	e.running(pod, "app")
	// A second sync keeps the sandbox.
	e.sync(pod)
	if n := len(e.status(pod).Sandboxes); n != 1 {
		t.Errorf("sandboxes = %d, want 1", n)
	}
}

func TestSyncPodImagePolicies(t *testing.T) {
	tests := []struct {
		name       string
		image      string
		policy     corev1.PullPolicy
		present    bool
		pullable   bool
		wantReason string
		wantEvent  string
	}{
		{name: "Always pulls a present image", image: "busybox:1.36", policy: corev1.PullAlways, present: true, pullable: true,
			wantEvent: `Normal Pulling Pulling image "busybox:1.36"`},
		{name: "Always fails when the registry does", image: "busybox:1.36", policy: corev1.PullAlways, present: true,
			wantReason: ReasonErrImagePull, wantEvent: `Warning Failed Failed to pull image "busybox:1.36": `},
		{name: "IfNotPresent pulls an absent image", image: "busybox:1.36", policy: corev1.PullIfNotPresent, pullable: true,
			wantEvent: `Normal Pulled Successfully pulled image "busybox:1.36"`},
		{name: "Never uses a present image", image: "busybox:1.36", policy: corev1.PullNever, present: true,
			wantEvent: `Normal Pulled Container image "busybox:1.36" already present on machine`},
		{name: "untagged defaults to latest and Always", image: "busybox", present: true, pullable: true,
			wantEvent: `Normal Pulling Pulling image "busybox"`},
		{name: "invalid name", image: "Busy Box", policy: corev1.PullIfNotPresent,
			wantReason: ReasonInvalidImageName, wantEvent: `Warning InspectFailed Failed to apply default image tag "Busy Box": `},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			if tt.present {
				e.fake.AddImage(tt.image)
			}
			if tt.pullable {
				e.fake.AllowPull(tt.image)
			}
			pod := basePod()
			pod.Spec.Containers[0].Image, pod.Spec.Containers[0].ImagePullPolicy = tt.image, tt.policy
			f := e.sync(pod)["app"]
			if f.Reason != tt.wantReason {
				t.Errorf("failure = %+v, want reason %q", f, tt.wantReason)
			}
			if evs := e.events.take(); !hasEvent(evs, tt.wantEvent) {
				t.Errorf("events %q lack %q", evs, tt.wantEvent)
			}
			if tt.wantReason == "" {
				e.running(pod, "app")
			}
		})
	}
}

func TestSyncPodNilRuntimeState(t *testing.T) {
	e := newEnv(t)
	e.fake.AddImage("busybox:1.36")
	pod := basePod()
	res, err := e.apply(pod, nil, nil, nil)
	if err != nil || len(res.Failures) != 0 || res.Failures == nil {
		t.Fatalf("Apply(nil state) = %+v, %v", res, err)
	}
	e.running(pod, "app")
}

// A container the runtime holds created and never started (berth stopped
// between CreateContainer and StartContainer; here the start failed and
// the fake, unlike containerd, left it created) is started in the next
// sync, not replaced: the same instance, no restart counted, nothing left.
func TestSyncPodStartsCreatedContainer(t *testing.T) {
	e := newEnv(t)
	e.fake.AddImage("busybox:1.36")
	pod := basePod()
	e.fake.InjectError("StartContainer", errors.New("connection closed"))
	e.sync(pod)
	created := e.status(pod).LatestContainer("app")
	if created == nil || created.State != runtimestate.ContainerCreated {
		t.Fatalf("after the failed start: %+v, want a created container", created)
	}
	e.events.take()
	e.fake.ResetCalls()
	if f := e.sync(pod); len(f) != 0 {
		t.Fatalf("failures: %v", f)
	}
	c := e.running(pod, "app")
	if c.ID != created.ID || c.RestartCount != 0 {
		t.Errorf("running %+v, want the created instance %s with restart count 0", c, created.ID)
	}
	if n := len(e.status(pod).Containers); n != 1 {
		t.Errorf("the runtime holds %d containers of the pod, want 1", n)
	}
	if slices.Contains(e.fake.Calls(), "CreateContainer") {
		t.Errorf("calls %q create a container", e.fake.Calls())
	}
	if got, want := e.events.take(), []string{"Normal Started Started container app"}; !slices.Equal(got, want) {
		t.Errorf("events = %q, want %q", got, want)
	}
}
