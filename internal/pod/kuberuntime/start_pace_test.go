package kuberuntime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berthk8s/berth/internal/pod/podplan"
)

// TestStartPace: n starts at a time in arrival order; a slot frees when
// its start ends or when the hold runs out, whichever is first, and never
// twice; a waiter gives up with its context.
func TestStartPace(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	p := newStartPace(2, 3*time.Second, clk)
	ctx := context.Background()
	first, _, err := p.acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	second, _, _ := p.acquire(ctx)

	got := make(chan func(), 1)
	go func() {
		done, _, err := p.acquire(ctx)
		if err != nil {
			t.Error(err)
		}
		got <- done
	}()
	waiting := func() bool {
		select {
		case <-got:
			return false
		case <-time.After(50 * time.Millisecond):
			return true
		}
	}
	if !waiting() {
		t.Fatal("a third start went ahead while two held their slots")
	}
	clk.Step(time.Second)
	first()
	third := <-got
	if third == nil {
		t.Fatal("no slot after the first start ended")
	}

	// The second start hangs: at 3 s its hold frees the slot (the third's
	// runs to 4 s), and its late end does not free another.
	clk.Step(2 * time.Second)
	fourth, _, err := acquireWithin(p, time.Second)
	if err != nil {
		t.Fatalf("the hold did not free the hung start's slot: %v", err)
	}
	second()
	if _, _, err := acquireWithin(p, 100*time.Millisecond); err == nil {
		t.Fatal("a late end freed a slot a second time: three starts hold two slots")
	}
	third()
	fourth()
	if len(p.slots) != 0 {
		t.Errorf("%d slots held after every start ended", len(p.slots))
	}

	var none *startPace
	if done, waited, err := none.acquire(ctx); err != nil || waited != 0 {
		t.Errorf("nil pace: waited %v, err %v", waited, err)
	} else {
		done()
	}
}

// acquireWithin acquires with a context that ends after d.
func acquireWithin(p *startPace, d time.Duration) (func(), time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	done, waited, err := p.acquire(ctx)
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return nil, waited, err
	}
	return done, waited, err
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

// TestApplyPacesNewPods: Apply creates at most ParallelPodStarts sandboxes
// at once; 0 starts every new pod at once, as upstream.
func TestApplyPacesNewPods(t *testing.T) {
	const pods = 4
	for _, tc := range []struct {
		name  string
		limit int // Config.ParallelPodStarts
		want  int // sandbox creations seen at once
	}{
		{"two at a time", 2, 2},
		{"unpaced", 0, pods},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gated := &gatedSandboxes{entered: make(chan string, pods), gate: make(chan struct{})}
			e := newEnv(t, func(c *Config) {
				gated.RuntimeServiceClient = c.Runtime
				c.Runtime = gated
				c.ParallelPodStarts = tc.limit
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
			select {
			case name := <-gated.entered:
				t.Errorf("sandbox of %s created while %d were being created, the limit is %d", name, tc.want, tc.limit)
			case <-time.After(100 * time.Millisecond):
			}
			close(gated.gate)
			go func() {
				for range gated.entered {
				}
			}()
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
