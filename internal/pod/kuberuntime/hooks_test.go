package kuberuntime

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/berthk8s/berth/internal/pod/podplan"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// hookRuntime wraps the fake CRI client (which has no ExecSync) to answer
// ExecSync and to log ExecSync and StopContainer calls in order.
type hookRuntime struct {
	runtimeapi.RuntimeServiceClient
	// exitCode and stderr answer every ExecSync.
	exitCode int32
	stderr   string

	mu  sync.Mutex
	log []string
}

func (h *hookRuntime) ExecSync(_ context.Context, req *runtimeapi.ExecSyncRequest, _ ...grpc.CallOption) (*runtimeapi.ExecSyncResponse, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.log = append(h.log, fmt.Sprintf("exec %s %s", req.GetContainerId(), strings.Join(req.GetCmd(), " ")))
	return &runtimeapi.ExecSyncResponse{Stdout: []byte("out"), Stderr: []byte(h.stderr), ExitCode: h.exitCode}, nil
}

func (h *hookRuntime) StopContainer(ctx context.Context, req *runtimeapi.StopContainerRequest, opts ...grpc.CallOption) (*runtimeapi.StopContainerResponse, error) {
	h.mu.Lock()
	h.log = append(h.log, fmt.Sprintf("stop %s %d", req.GetContainerId(), req.GetTimeout()))
	h.mu.Unlock()
	return h.RuntimeServiceClient.StopContainer(ctx, req, opts...)
}

func (h *hookRuntime) take() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.log
	h.log = nil
	return out
}

func newHookEnv(t *testing.T) (*env, *hookRuntime) {
	t.Helper()
	var h *hookRuntime
	e := newEnv(t, func(c *Config) {
		h = &hookRuntime{RuntimeServiceClient: c.Runtime}
		c.Runtime = h
	})
	e.fake.AddImage("busybox:1.36")
	return e, h
}

func execHandler(cmd ...string) *corev1.LifecycleHandler {
	return &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: cmd}}
}

func TestPostStartExec(t *testing.T) {
	e, h := newHookEnv(t)
	pod := basePod()
	pod.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PostStart: execHandler("sh", "-c", "echo hi > /tmp/x")}
	if f := e.sync(pod); len(f) != 0 {
		t.Fatalf("failures: %v", f)
	}
	c := e.running(pod, "app")
	if diff := cmp.Diff([]string{"exec " + c.ID + " sh -c echo hi > /tmp/x"}, h.take()); diff != "" {
		t.Errorf("runtime calls (-want +got):\n%s", diff)
	}
}

func TestPostStartFailureKillsContainer(t *testing.T) {
	e, h := newHookEnv(t)
	h.exitCode, h.stderr = 1, "boom"
	pod := basePod()
	pod.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PostStart: execHandler("false")}
	f := e.sync(pod)
	msg := `Exec lifecycle hook ([false]) for Container "app" in Pod "web_default(uid-1)" failed - ` +
		`error: command 'false' exited with 1: boom, message: "outboom"`
	want := map[string]runtimestate.StartFailure{"app": {Reason: ReasonPostStartHookError, Message: msg}}
	if diff := cmp.Diff(want, f); diff != "" {
		t.Errorf("failures (-want +got):\n%s", diff)
	}
	c := e.status(pod).LatestContainer("app")
	if c == nil || c.State != runtimestate.ContainerExited {
		t.Fatalf("container after failed postStart = %+v, want exited", c)
	}
	evs := e.events.take()
	for _, ev := range []string{"Warning FailedPostStartHook " + msg, "Normal Killing FailedPostStartHook"} {
		if !slices.Contains(evs, ev) {
			t.Errorf("events %q lack %q", evs, ev)
		}
	}
	if diff := cmp.Diff([]string{"exec " + c.ID + " false", "stop " + c.ID + " 30"}, h.take()); diff != "" {
		t.Errorf("runtime calls (-want +got):\n%s", diff)
	}
}

func TestPostStartHTTP(t *testing.T) {
	e, _ := newHookEnv(t)
	got := make(chan *http.Request, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r
		w.WriteHeader(http.StatusInternalServerError) // upstream ignores the status
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	pod := basePod()
	c := &pod.Spec.Containers[0]
	p, _ := strconv.Atoi(port)
	c.Ports = []corev1.ContainerPort{{Name: "web", ContainerPort: int32(p)}}
	c.Lifecycle = &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{
		Host: "127.0.0.1", Port: intstr.FromString("web"), Path: "/started?x=1",
		HTTPHeaders: []corev1.HTTPHeader{{Name: "X-Hook", Value: "yes"}},
	}}}
	if f := e.sync(pod); len(f) != 0 {
		t.Fatalf("failures: %v", f)
	}
	r := <-got
	if r.URL.Path != "/started" || r.URL.RawQuery != "x=1" || r.Header.Get("X-Hook") != "yes" ||
		r.Header.Get("User-Agent") != "kube-lifecycle/1.37" {
		t.Errorf("request = %s %s headers %v", r.Method, r.URL, r.Header)
	}
}

func TestPreStopRunsBeforeStop(t *testing.T) {
	e, h := newHookEnv(t)
	pod := basePod()
	pod.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PreStop: execHandler("sh", "-c", "drain")}
	e.sync(pod)
	c := e.running(pod, "app")
	h.take()
	e.events.take()
	h.exitCode = 2
	if err := e.m.KillPod(e.ctx, pod, e.status(pod), nil); err != nil {
		t.Fatal(err)
	}
	// The fake clock does not move: the hook took 0 s of the 30 s.
	if diff := cmp.Diff([]string{"exec " + c.ID + " sh -c drain", "stop " + c.ID + " 30"}, h.take()); diff != "" {
		t.Errorf("runtime calls (-want +got):\n%s", diff)
	}
	if evs := e.events.take(); !slices.Contains(evs, "Warning FailedPreStopHook PreStopHook failed") {
		t.Errorf("events %q lack FailedPreStopHook", evs)
	}
	// The pod unknown (orphan): no preStop.
	pod2 := basePod()
	pod2.UID, pod2.Name = "uid-2", "orphan"
	pod2.Spec.Containers[0].Lifecycle = pod.Spec.Containers[0].Lifecycle
	e.sync(pod2)
	c2 := e.running(pod2, "app")
	h.take()
	if err := e.m.KillPod(e.ctx, nil, e.status(pod2), nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"stop " + c2.ID + " 30"}, h.take()); diff != "" {
		t.Errorf("orphan runtime calls (-want +got):\n%s", diff)
	}
}

func TestKillPodStopsSidecarsLast(t *testing.T) {
	e, h := newHookEnv(t)
	// Start five ordinary containers, then kill them as a pod in which
	// three of them are sidecars.
	pod := basePod()
	app := pod.Spec.Containers[0]
	for _, n := range []string{"web", "s1", "s2", "s3"} {
		c := app
		c.Name = n
		pod.Spec.Containers = append(pod.Spec.Containers, c)
	}
	e.sync(pod)
	ids := map[string]string{}
	for _, n := range []string{"app", "web", "s1", "s2", "s3"} {
		ids[e.running(pod, n).ID] = n
	}
	always := corev1.ContainerRestartPolicyAlways
	sidecarPod := basePod()
	sidecarPod.Spec.Containers = []corev1.Container{pod.Spec.Containers[0], pod.Spec.Containers[1]}
	for _, n := range []string{"s1", "init", "s2", "s3"} {
		c := app
		c.Name = n
		if n != "init" {
			c.RestartPolicy = &always
		}
		sidecarPod.Spec.InitContainers = append(sidecarPod.Spec.InitContainers, c)
	}
	h.take()
	if err := e.m.KillPod(e.ctx, sidecarPod, e.status(pod), nil); err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, l := range h.take() {
		f := strings.Fields(l)
		order = append(order, ids[f[1]])
	}
	slices.Sort(order[:2]) // the regular containers stop in parallel
	if diff := cmp.Diff([]string{"app", "web", "s3", "s2", "s1"}, order); diff != "" {
		t.Errorf("stop order (-want +got):\n%s", diff)
	}
}

func TestLivenessKillUsesProbeGrace(t *testing.T) {
	e, h := newHookEnv(t)
	pod := basePod()
	ten := int64(10)
	pod.Spec.Containers[0].LivenessProbe = &corev1.Probe{TerminationGracePeriodSeconds: &ten}
	e.sync(pod)
	c := e.running(pod, "app")
	h.take()
	if _, err := e.apply(pod, e.status(pod), &podplan.ProbeSnapshot{LivenessFailed: map[string]bool{c.ID: true}}, nil); err != nil {
		t.Fatal(err)
	}
	if log := h.take(); len(log) == 0 || log[0] != "stop "+c.ID+" 10" {
		t.Errorf("runtime calls = %q, want the stop with the probe's 10 s first", log)
	}
}

func TestKillGrace(t *testing.T) {
	i := func(v int64) *int64 { return &v }
	pod := func(deletion, termination *int64) *corev1.Pod {
		p := basePod()
		p.DeletionGracePeriodSeconds, p.Spec.TerminationGracePeriodSeconds = deletion, termination
		return p
	}
	probed := &corev1.Container{Name: "app",
		LivenessProbe: &corev1.Probe{TerminationGracePeriodSeconds: i(7)},
		StartupProbe:  &corev1.Probe{TerminationGracePeriodSeconds: i(3)},
	}
	tests := []struct {
		name                string
		pod                 *corev1.Pod
		spec                *corev1.Container
		reason              string
		annotated, override *int64
		want                int64
	}{
		{name: "termination grace period", pod: pod(nil, i(30)), want: 30},
		{name: "deletion grace period wins", pod: pod(i(10), i(30)), want: 10},
		{name: "override wins", pod: pod(i(10), i(30)), override: i(5), want: 5},
		{name: "zero stays zero before the hooks", pod: pod(nil, i(0)), want: 0},
		{name: "unset", pod: pod(nil, nil), want: 2},
		{name: "pod unknown: annotation", annotated: i(45), want: 45},
		{name: "pod known: annotation ignored", pod: pod(nil, nil), annotated: i(45), want: 2},
		{name: "pod unknown, nothing", want: 2},
		{name: "liveness kill: probe grace", pod: pod(nil, i(30)), spec: probed, reason: podplan.KillReasonLivenessProbe, want: 7},
		{name: "startup kill: probe grace", pod: pod(nil, i(30)), spec: probed, reason: podplan.KillReasonStartupProbe, want: 3},
		{name: "probe kill, probe without grace", pod: pod(nil, i(30)), spec: &corev1.Container{LivenessProbe: &corev1.Probe{}},
			reason: podplan.KillReasonLivenessProbe, want: 30},
		{name: "spec change ignores probe grace", pod: pod(nil, i(30)), spec: probed, reason: podplan.KillReasonSpecChanged, want: 30},
		{name: "deletion beats probe grace", pod: pod(i(12), i(30)), spec: probed, reason: podplan.KillReasonLivenessProbe, want: 12},
		{name: "override beats probe grace", pod: pod(nil, i(30)), spec: probed, reason: podplan.KillReasonLivenessProbe, override: i(1), want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var pod *corev1.Pod
			if tt.pod != nil {
				pod = tt.pod
			}
			if got := killGrace(pod, tt.spec, tt.reason, tt.annotated, tt.override); got != tt.want {
				t.Errorf("killGrace = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestStopTimeout(t *testing.T) {
	tests := []struct{ grace, hook, wait, want int64 }{
		{grace: 30, want: 30},
		{grace: 30, hook: 10, want: 20},
		{grace: 30, hook: 10, wait: 5, want: 15},
		{grace: 30, hook: 29, want: 2},
		{grace: 30, hook: 45, want: 2},
		{grace: 0, want: 2},
	}
	for _, tt := range tests {
		if got := stopTimeout(tt.grace, tt.hook, tt.wait); got != tt.want {
			t.Errorf("stopTimeout(%d, %d, %d) = %d, want %d", tt.grace, tt.hook, tt.wait, got, tt.want)
		}
	}
}

func TestStopAfter(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "s1", RestartPolicy: &always}, {Name: "init"}, {Name: "s2", RestartPolicy: &always}},
		Containers:     []corev1.Container{{Name: "a"}, {Name: "b"}},
	}}
	want := map[string][]string{"s1": {"a", "b", "s2"}, "s2": {"a", "b"}}
	if diff := cmp.Diff(want, stopAfter(pod)); diff != "" {
		t.Errorf("stopAfter (-want +got):\n%s", diff)
	}
	if got := stopAfter(&corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}}}}); len(got) != 0 {
		t.Errorf("stopAfter without sidecars = %v", got)
	}
}

func TestRunHook(t *testing.T) {
	e, h := newHookEnv(t)
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer plain.Close()
	host, port, _ := net.SplitHostPort(plain.Listener.Addr().String())
	p, _ := strconv.Atoi(port)
	pod := basePod()
	cancelled, cancel := context.WithCancel(e.ctx)
	cancel()
	tests := []struct {
		name      string
		ctx       context.Context
		handler   corev1.LifecycleHandler
		execCode  int32
		wantMsg   string
		wantErr   bool
		wantEvent string
	}{
		{name: "exec succeeds", ctx: e.ctx, handler: *execHandler("true")},
		{name: "exec fails", ctx: e.ctx, handler: *execHandler("false"), execCode: 1, wantErr: true,
			wantMsg: `Exec lifecycle hook ([false]) for Container "app" in Pod "web_default(uid-1)" failed - error: command 'false' exited with 1: , message: "out"`},
		{name: "https to a plain HTTP server falls back to HTTP", ctx: e.ctx,
			handler:   corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Host: host, Port: intstr.FromInt(p), Scheme: corev1.URISchemeHTTPS}},
			wantEvent: "Warning LifecycleHTTPFallback request to HTTPS lifecycle hook " + plain.Listener.Addr().String() + " got HTTP response, retry with HTTP succeeded"},
		{name: "http to a closed port fails", ctx: e.ctx, wantErr: true,
			handler: corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Host: "127.0.0.1", Port: intstr.FromInt(1), Path: "/x"}}},
		{name: "sleep ended by the context", ctx: cancelled, wantErr: true,
			handler: corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 5}},
			wantMsg: `Sleep lifecycle hook (5) for Container "app" in Pod "web_default(uid-1)" failed - error: container terminated before sleep hook finished`},
		{name: "http without a host needs the pod's IP", ctx: e.ctx, wantErr: true,
			handler: corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt(80), Path: "/x"}},
			wantMsg: `HTTP lifecycle hook (/x) for Container "app" in Pod "web_default(uid-1)" failed - error: failed to find networking container: the pod has no IP`},
		{name: "http to a port name the container lacks", ctx: e.ctx, wantErr: true,
			handler: corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Host: "127.0.0.1", Port: intstr.FromString("nope"), Path: "/x"}},
			wantMsg: `HTTP lifecycle hook (/x) for Container "app" in Pod "web_default(uid-1)" failed - error: port "nope" not found`},
		{name: "no handler", ctx: e.ctx, wantErr: true, wantMsg: "Cannot run handler: invalid handler: &LifecycleHandler{Exec:nil,HTTPGet:nil,TCPSocket:nil,Sleep:nil,}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h.exitCode = tt.execCode
			e.events.take()
			msg, err := e.m.runHook(tt.ctx, hookTarget{Pod: pod, Container: &pod.Spec.Containers[0], ContainerID: "c1"}, &tt.handler)
			if (err != nil) != tt.wantErr {
				t.Fatalf("runHook err = %v, wantErr %v", err, tt.wantErr)
			}
			if tt.wantMsg != "" && msg != tt.wantMsg {
				t.Errorf("message = %q, want %q", msg, tt.wantMsg)
			}
			if tt.wantErr && msg == "" {
				t.Error("a failed hook has no message")
			}
			evs := e.events.take()
			if tt.wantEvent != "" && !slices.Contains(evs, tt.wantEvent) {
				t.Errorf("events = %q, want %q", evs, tt.wantEvent)
			}
		})
	}
}

func TestSyncPodSidecarLifecycle(t *testing.T) {
	e, _ := newHookEnv(t)
	pod := basePod()
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	always := corev1.ContainerRestartPolicyAlways
	side := pod.Spec.Containers[0]
	side.Name, side.RestartPolicy = "proxy", &always
	pod.Spec.InitContainers = []corev1.Container{side}
	e.sync(pod)
	e.running(pod, "proxy")
	if c := e.status(pod).LatestContainer("app"); c != nil {
		t.Fatalf("main container started with the sidecar: %+v", c)
	}
	e.sync(pod)
	app := e.running(pod, "app")
	e.running(pod, "proxy")
	if err := e.fake.ExitContainer(app.ID, 0, ""); err != nil {
		t.Fatal(err)
	}
	e.sync(pod) // the main container is done: the pod is killed
	if rt := e.status(pod); rt.Running() {
		t.Errorf("sidecar still running after the main container completed: %+v", rt)
	}
}

func TestTermOrderWaitEndsWithGrace(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	always := corev1.ContainerRestartPolicyAlways
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "side", RestartPolicy: &always}},
		Containers:     []corev1.Container{{Name: "main"}, {Name: "done"}},
	}}
	// "done" is not running: nothing waits for it. "main" never stops.
	o := newTermOrder(clk, pod, []string{"main", "side"})
	if got := o.waitTurn("main", 30); got != 0 {
		t.Errorf("a regular container waited %d s", got)
	}
	waited := make(chan int64)
	go func() { waited <- o.waitTurn("side", 7) }()
	for !clk.HasWaiters() {
		runtime.Gosched()
	}
	clk.Step(7 * time.Second)
	if got := <-waited; got != 7 {
		t.Errorf("sidecar waited %d s, want the whole 7 s grace", got)
	}
	// Once main stopped, the sidecar's turn comes at once.
	o.stopped("main")
	if got := o.waitTurn("side", 7); got != 0 {
		t.Errorf("sidecar waited %d s after main stopped", got)
	}
}

// blockingExec is a runtime whose ExecSync blocks until its context ends.
type blockingExec struct {
	runtimeapi.RuntimeServiceClient
}

func (blockingExec) ExecSync(ctx context.Context, _ *runtimeapi.ExecSyncRequest, _ ...grpc.CallOption) (*runtimeapi.ExecSyncResponse, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func TestPreStopBoundedByGrace(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Runtime = blockingExec{c.Runtime} })
	pod := basePod()
	pod.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PreStop: execHandler("sleep", "1000")}
	took := make(chan int64)
	go func() {
		took <- e.m.runPreStop(e.ctx, hookTarget{Pod: pod, Container: &pod.Spec.Containers[0], ContainerID: "c1"}, 5)
	}()
	for !e.clock.HasWaiters() {
		runtime.Gosched()
	}
	e.clock.Step(5 * time.Second)
	if got := <-took; got != 5 {
		t.Errorf("runPreStop took %d s, want the 5 s grace", got)
	}
	// The abandoned hook's context is cancelled: it fails and says so
	// (waited for, so that it does not log after the test).
	for !slices.Contains(e.events.take(), "Warning FailedPreStopHook PreStopHook failed") {
		runtime.Gosched()
	}
}
