package kuberuntime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berthk8s/berth/internal/pod/podplan"
)

// state is how many starts hold a slot and how many wait.
func (p *startPace) state() (running, queued int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.running, len(p.queue)
}

// acquired is what a start waiting in a goroutine got.
type acquired struct {
	name string
	done func()
	err  error
}

// acquireAsync asks for a slot in a goroutine, once the pace has queued
// queued waiters before it, and waits until it is queued or holds a slot.
func acquireAsync(t *testing.T, ctx context.Context, p *startPace, name string, firstSeen time.Time, out chan<- acquired) {
	t.Helper()
	_, queuedBefore := p.state()
	go func() {
		done, _, err := p.acquire(ctx, firstSeen)
		out <- acquired{name, done, err}
	}()
	eventually(t, name+" queued", func() bool { _, q := p.state(); return q > queuedBefore })
}

// fixed is a pace of n slots that never moves.
func fixed(n int) StartLimits { return StartLimits{Floor: n, Initial: n, Ceiling: n} }

// TestStartPaceOldestFirst: a freed slot goes to the waiter whose pod
// berth saw first, whatever the order of the asks; ties go in ask order.
func TestStartPaceOldestFirst(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(100, 0))
	p := newStartPace(fixed(1), startHold, clk, nil)
	ctx := context.Background()
	holder, _, err := p.acquire(ctx, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan acquired, 4)
	seen := func(s int) time.Time { return time.Unix(int64(s), 0) }
	acquireAsync(t, ctx, p, "c", seen(3), got)
	acquireAsync(t, ctx, p, "a1", seen(1), got)
	acquireAsync(t, ctx, p, "b", seen(2), got)
	acquireAsync(t, ctx, p, "a2", seen(1), got)

	var order []string
	end := holder
	for range 4 {
		end()
		a := <-got
		if a.err != nil {
			t.Fatal(a.err)
		}
		order = append(order, a.name)
		end = a.done
	}
	end()
	if diff := cmp.Diff([]string{"a1", "a2", "b", "c"}, order); diff != "" {
		t.Errorf("order of the starts (-want +got):\n%s", diff)
	}
	if r, q := p.state(); r != 0 || q != 0 {
		t.Errorf("%d running, %d queued after every start ended", r, q)
	}
}

// TestStartPaceHold: a hung start frees its slot after the hold; its late
// end frees nothing more, nor does the stopped hold of a start that ended.
func TestStartPaceHold(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	p := newStartPace(fixed(1), 3*time.Second, clk, nil)
	ctx := context.Background()
	hung, _, err := p.acquire(ctx, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan acquired, 2)
	acquireAsync(t, ctx, p, "second", time.Time{}, got)
	clk.Step(3 * time.Second)
	second := <-got
	if second.err != nil {
		t.Fatalf("the hold did not free the hung start's slot: %v", second.err)
	}
	hung()
	if r, q := p.state(); r != 1 || q != 0 {
		t.Fatalf("after the hung start's late end: %d running, %d queued, want 1 and 0", r, q)
	}

	// The second ends before its hold; a third holds the slot past the
	// second's hold, which must not free it.
	clk.Step(time.Second)
	second.done()
	third, _, err := p.acquire(ctx, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	clk.Step(2500 * time.Millisecond) // past the second's hold (at 6 s), within the third's (7 s)
	acquireAsync(t, ctx, p, "fourth", time.Time{}, got)
	if r, q := p.state(); r != 1 || q != 1 {
		t.Fatalf("a stopped hold freed a slot: %d running, %d queued, want 1 and 1", r, q)
	}
	third()
	fourth := <-got
	fourth.done()
	if r, q := p.state(); r != 0 || q != 0 {
		t.Errorf("%d running, %d queued after every start ended", r, q)
	}
}

// TestStartPaceCancel: a waiter whose context ends leaves the queue with
// the context's error and takes no slot.
func TestStartPaceCancel(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	p := newStartPace(fixed(1), startHold, clk, nil)
	holder, _, err := p.acquire(context.Background(), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan acquired, 1)
	acquireAsync(t, ctx, p, "canceled", time.Time{}, got)
	cancel()
	if a := <-got; !errors.Is(a.err, context.Canceled) || a.done != nil {
		t.Fatalf("canceled waiter: err %v, done %v; want context.Canceled and no done", a.err, a.done != nil)
	}
	if r, q := p.state(); r != 1 || q != 0 {
		t.Fatalf("after the cancel: %d running, %d queued, want 1 and 0", r, q)
	}
	holder()
	next, _, err := p.acquire(context.Background(), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	next()
	if r, q := p.state(); r != 0 || q != 0 {
		t.Errorf("%d running, %d queued after every start ended", r, q)
	}

	var none *startPace
	if done, waited, err := none.acquire(ctx, time.Time{}); err != nil || waited != 0 {
		t.Errorf("nil pace: waited %v, err %v", waited, err)
	} else {
		done()
	}
	none.observe(ctx, startSandbox, time.Second)
}

// TestStartPaceGrows: a limit raised by steady latencies gives its new
// slot to the waiter at once, and tells each new limit.
func TestStartPaceGrows(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	var told []int
	p := newStartPace(StartLimits{Floor: 1, Initial: 1, Ceiling: 4}, startHold, clk, func(n int) { told = append(told, n) })
	ctx := context.Background()
	holder, _, err := p.acquire(ctx, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan acquired, 1)
	acquireAsync(t, ctx, p, "waiter", time.Time{}, got)
	for i := 0; i < 20 && len(told) < 2; i++ {
		clk.Step(time.Second)
		p.observe(ctx, startSandbox, 100*time.Millisecond)
	}
	a := <-got
	if a.err != nil {
		t.Fatal(a.err)
	}
	if diff := cmp.Diff([]int{1, 2}, told); diff != "" {
		t.Errorf("limits told (-want +got):\n%s", diff)
	}
	holder()
	a.done()
}

// gatedSandboxes passes runtime calls to the fake CRI; RunPodSandbox
// first reports its entry on entered and then waits for the gate.
type gatedSandboxes struct {
	runtimeapi.RuntimeServiceClient
	entered chan string
	gate    chan struct{}
}

func (g *gatedSandboxes) RunPodSandbox(ctx context.Context, in *runtimeapi.RunPodSandboxRequest, opts ...grpc.CallOption) (*runtimeapi.RunPodSandboxResponse, error) {
	g.entered <- in.GetConfig().GetMetadata().GetName()
	<-g.gate
	return g.RuntimeServiceClient.RunPodSandbox(ctx, in, opts...)
}

// TestApplyPacesNewPods: Apply creates as many sandboxes at once as the
// limit allows, the others wait; zero limits start every new pod at once,
// as upstream.
func TestApplyPacesNewPods(t *testing.T) {
	const pods = 4
	for _, tc := range []struct {
		name   string
		limits StartLimits
		want   int // sandbox creations seen at once
	}{
		{"two at a time", fixed(2), 2},
		{"unpaced", StartLimits{}, pods},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gated := &gatedSandboxes{entered: make(chan string, pods), gate: make(chan struct{})}
			e := newEnv(t, func(c *Config) {
				gated.RuntimeServiceClient = c.Runtime
				c.Runtime = gated
				c.PodStarts = tc.limits
			})
			var wg sync.WaitGroup
			errs := make(chan error, pods)
			for i := range pods {
				pod := basePod()
				pod.Name, pod.UID = fmt.Sprintf("web-%d", i), types.UID(fmt.Sprintf("uid-%d", i))
				rt := e.status(pod)
				plan := podplan.Compute(podplan.Inputs{Pod: pod, Runtime: rt, Now: e.clock.Now()})
				wg.Go(func() {
					_, err := e.m.Apply(e.ctx, pod, rt, plan, ApplyOptions{})
					errs <- err
				})
			}
			for range tc.want {
				<-gated.entered
			}
			if e.m.starts != nil {
				eventually(t, "the other pods queued", func() bool { _, q := e.m.starts.state(); return q == pods-tc.want })
				if r, _ := e.m.starts.state(); r != tc.want || len(gated.entered) != 0 {
					t.Errorf("%d starts hold a slot and %d more sandboxes are being created, the limit is %d", r, len(gated.entered), tc.want)
				}
			}
			close(gated.gate)
			wg.Wait()
			close(gated.entered)
			close(errs)
			for err := range errs {
				if err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// TestApplyReadySandboxNotGated: with every slot held, the containers of
// a pod whose sandbox is ready start at once; only new sandboxes wait.
func TestApplyReadySandboxNotGated(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.PodStarts = fixed(1) })
	e.fake.AddImage("busybox:1.36")
	pod := basePod()
	pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: "side", Image: "busybox:1.36", ImagePullPolicy: corev1.PullIfNotPresent})
	rt := e.status(pod)
	first := podplan.Compute(podplan.Inputs{Pod: pod, Runtime: rt, Now: e.clock.Now()})
	first.StartContainers = []int{0} // "side" is left for the ready sandbox
	if res, err := e.m.Apply(e.ctx, pod, rt, first, ApplyOptions{}); err != nil || len(res.Failures) > 0 {
		t.Fatalf("first apply: %v, failures %v", err, res.Failures)
	}

	held, _, err := e.m.starts.acquire(e.ctx, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	defer held()
	rt = e.status(pod)
	plan := podplan.Compute(podplan.Inputs{Pod: pod, Runtime: rt, Now: e.clock.Now()})
	if plan.CreateSandbox || len(plan.StartContainers) != 1 {
		t.Fatalf("plan %+v: want the ready sandbox and one container to start", plan)
	}
	applied := make(chan error, 1)
	go func() {
		_, err := e.m.Apply(e.ctx, pod, rt, plan, ApplyOptions{})
		applied <- err
	}()
	for done := false; !done; {
		select {
		case err := <-applied:
			if err != nil {
				t.Fatal(err)
			}
			done = true
		default:
			if _, q := e.m.starts.state(); q > 0 {
				t.Fatal("the container of a ready sandbox waits for a new pod's start slot")
			}
			time.Sleep(time.Millisecond)
		}
	}
	e.running(pod, "side")
}

// timedRuntime passes runtime calls to the fake CRI; RunPodSandbox takes
// sandbox and CreateContainer container on the fake clock.
type timedRuntime struct {
	runtimeapi.RuntimeServiceClient
	clock              *clocktesting.FakeClock
	sandbox, container time.Duration
}

func (r *timedRuntime) RunPodSandbox(ctx context.Context, in *runtimeapi.RunPodSandboxRequest, opts ...grpc.CallOption) (*runtimeapi.RunPodSandboxResponse, error) {
	r.clock.Step(r.sandbox)
	return r.RuntimeServiceClient.RunPodSandbox(ctx, in, opts...)
}

func (r *timedRuntime) CreateContainer(ctx context.Context, in *runtimeapi.CreateContainerRequest, opts ...grpc.CallOption) (*runtimeapi.CreateContainerResponse, error) {
	r.clock.Step(r.container)
	return r.RuntimeServiceClient.CreateContainer(ctx, in, opts...)
}

// TestApplyTimesStarts: Apply tells the pace how long RunPodSandbox and
// each container's create and start took, each as its kind.
func TestApplyTimesStarts(t *testing.T) {
	timed := &timedRuntime{sandbox: 200 * time.Millisecond, container: 50 * time.Millisecond}
	e := newEnv(t, func(c *Config) {
		timed.RuntimeServiceClient, timed.clock = c.Runtime, c.Clock.(*clocktesting.FakeClock)
		c.Runtime = timed
		c.PodStarts = StartLimits{Floor: 1, Initial: 2, Ceiling: 4}
	})
	e.fake.AddImage("busybox:1.36")
	if failures := e.sync(basePod()); len(failures) > 0 {
		t.Fatalf("failures: %v", failures)
	}
	e.m.starts.mu.Lock()
	sandbox, container := e.m.starts.limit.baseline(startSandbox), e.m.starts.limit.baseline(startContainer)
	e.m.starts.mu.Unlock()
	if sandbox != timed.sandbox || container != timed.container {
		t.Errorf("baselines: sandbox %v, container %v; want %v and %v", sandbox, container, timed.sandbox, timed.container)
	}
}
