package kuberuntime

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/google/go-cmp/cmp"

	"github.com/berthk8s/berth/internal/pod/podplan"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// gatedImages passes image calls to the fake CRI; PullImage first reports
// its entry on entered and then waits for the gate, counting the pulls in
// flight.
type gatedImages struct {
	runtimeapi.ImageServiceClient
	entered chan string
	gate    chan struct{}

	mu          sync.Mutex // guards inFlight and maxInFlight
	inFlight    int
	maxInFlight int
}

func (g *gatedImages) PullImage(ctx context.Context, in *runtimeapi.PullImageRequest, opts ...grpc.CallOption) (*runtimeapi.PullImageResponse, error) {
	g.mu.Lock()
	g.inFlight++
	g.maxInFlight = max(g.maxInFlight, g.inFlight)
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.inFlight--
		g.mu.Unlock()
	}()
	g.entered <- in.GetImage().GetImage()
	<-g.gate
	return g.ImageServiceClient.PullImage(ctx, in, opts...)
}

func TestPullsAreBounded(t *testing.T) {
	const pods = 4
	for _, tc := range []struct {
		name  string
		limit int // Config.Pulls.MaxParallel
		want  int // pulls seen at once
	}{
		{"serializeImagePulls", 1, 1},
		{"maxParallelImagePulls 2", 2, 2},
		{"unbounded", 0, pods},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gated := &gatedImages{entered: make(chan string, pods), gate: make(chan struct{})}
			e := newEnv(t, func(c *Config) {
				gated.ImageServiceClient = c.Images
				c.Images = gated
				c.Pulls.MaxParallel = tc.limit
			})
			var wg sync.WaitGroup
			errs := make(chan error, pods)
			for i := range pods {
				pod := basePod()
				pod.Name, pod.UID = fmt.Sprintf("web-%d", i), types.UID(fmt.Sprintf("uid-%d", i))
				pod.Spec.Containers[0].Image = fmt.Sprintf("app-%d:1.0", i)
				e.fake.AllowPull(pod.Spec.Containers[0].Image)
				rt := e.status(pod)
				plan := podplan.Compute(podplan.Inputs{Pod: pod, Runtime: rt, Now: e.clock.Now()})
				wg.Go(func() {
					res, err := e.m.Apply(e.ctx, pod, rt, plan, ApplyOptions{})
					if err == nil && len(res.Failures) > 0 {
						err = fmt.Errorf("pod %s: failures %v", pod.Name, res.Failures)
					}
					errs <- err
				})
			}
			for range tc.want {
				<-gated.entered
			}
			select {
			case img := <-gated.entered:
				t.Errorf("pull of %s started while %d were running, the limit is %d", img, tc.want, tc.limit)
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
			if gated.maxInFlight != tc.want {
				t.Errorf("at most %d pulls ran at once, want %d", gated.maxInFlight, tc.want)
			}
		})
	}
}

func TestPullSlotWaitEndsWithContext(t *testing.T) {
	slots := newPullSlots(1)
	release, err := slots.acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := slots.acquire(ctx); err == nil {
		t.Fatal("acquire of a full slot set with a cancelled context succeeded")
	}
}

// TestPullQPS pulls one image per pod, one pod after another, at the
// times given: the registryPullQPS bucket refuses a pull with upstream's
// error when empty, and refills with time.
func TestPullQPS(t *testing.T) {
	refused := runtimestate.StartFailure{Reason: ReasonErrImagePull, Message: "pull QPS exceeded"}
	for _, tc := range []struct {
		name       string
		qps        float32
		burst      int
		pullsAt    []time.Duration // since the start; non-decreasing
		wantFailed []*runtimestate.StartFailure
	}{
		{name: "no limit", burst: 1, pullsAt: []time.Duration{0, 0, 0, 0},
			wantFailed: []*runtimestate.StartFailure{nil, nil, nil, nil}},
		{name: "burst then refused", qps: 1, burst: 2, pullsAt: []time.Duration{0, 0, 0},
			wantFailed: []*runtimestate.StartFailure{nil, nil, &refused}},
		{name: "refills at qps", qps: 1, burst: 2, pullsAt: []time.Duration{0, 0, time.Second, time.Second},
			wantFailed: []*runtimestate.StartFailure{nil, nil, nil, &refused}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, func(c *Config) { c.Pulls.QPS, c.Pulls.Burst = tc.qps, tc.burst })
			start := e.clock.Now()
			var got []*runtimestate.StartFailure
			for i, at := range tc.pullsAt {
				e.clock.SetTime(start.Add(at))
				pod := basePod()
				pod.Name, pod.UID = fmt.Sprintf("web-%d", i), types.UID(fmt.Sprintf("uid-%d", i))
				pod.Spec.Containers[0].Image = fmt.Sprintf("app-%d:1.0", i)
				e.fake.AllowPull(pod.Spec.Containers[0].Image)
				rt := e.status(pod)
				plan := podplan.Compute(podplan.Inputs{Pod: pod, Runtime: rt, Now: e.clock.Now()})
				res, err := e.m.Apply(e.ctx, pod, rt, plan, ApplyOptions{})
				if err != nil {
					t.Fatalf("pod %s: %v", pod.Name, err)
				}
				var f *runtimestate.StartFailure
				if sf, ok := res.Failures[pod.Spec.Containers[0].Name]; ok {
					f = &sf
				}
				got = append(got, f)
			}
			if diff := cmp.Diff(tc.wantFailed, got); diff != "" {
				t.Errorf("start failures by pull (-want +got):\n%s", diff)
			}
		})
	}
}
