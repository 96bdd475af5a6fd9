package criproxy

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/platform/cri"
	"github.com/berthk8s/berth/internal/platform/cri/crifake"
)

// start runs a fake runtime behind a proxy and returns the proxy and a
// CRI client of the proxy's socket.
func start(t *testing.T) (*Proxy, *cri.Client, *crifake.Fake) {
	t.Helper()
	fake := crifake.New(clock.RealClock{})
	fake.EnableEvents()
	p, err := Start(filepath.Join(t.TempDir(), "proxy.sock"), fake.Endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := cri.Dial(ctx, cri.Options{RuntimeEndpoint: "unix://" + p.Socket(), Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return p, c, fake
}

func listSandboxes(c *cri.Client) error {
	_, err := c.Runtime.ListPodSandbox(context.Background(), &runtimeapi.ListPodSandboxRequest{})
	return err
}

// TestForwards: calls pass through unchanged, unary and streaming, and
// the runtime's errors come back with their codes.
func TestForwards(t *testing.T) {
	p, c, fake := start(t)
	ctx := context.Background()
	cfg := &runtimeapi.PodSandboxConfig{Metadata: &runtimeapi.PodSandboxMetadata{Name: "p", Namespace: "ns", Uid: "u1"}}
	run, err := c.Runtime.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: cfg})
	if err != nil {
		t.Fatalf("RunPodSandbox through the proxy: %v", err)
	}
	list, err := c.Runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil || len(list.GetItems()) != 1 || list.GetItems()[0].GetId() != run.GetPodSandboxId() {
		t.Fatalf("ListPodSandbox = %v, %v; want the sandbox made", list.GetItems(), err)
	}
	if diff := cmp.Diff("u1", list.GetItems()[0].GetMetadata().GetUid()); diff != "" {
		t.Errorf("metadata changed on the way: %s", diff)
	}
	_, err = c.Runtime.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: "missing"})
	if !errors.Is(err, cri.ErrNotFound) {
		t.Errorf("status of a missing sandbox = %v; want the runtime's NotFound", err)
	}
	// The stream is bounded so a lost event fails the test, not the run.
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	stream, err := c.Runtime.GetContainerEvents(sctx, &runtimeapi.GetEventsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	// The call returns before the runtime has subscribed (the proxy opens
	// its own stream to the runtime behind it): an event emitted before
	// then reaches nobody, so wait for the runtime to hold the stream.
	for fake.EventStreams() == 0 {
		if sctx.Err() != nil {
			t.Fatal("the runtime never saw the event stream opened through the proxy")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := c.Runtime.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: run.GetPodSandboxId()}); err != nil {
		t.Fatal(err)
	}
	ev, err := stream.Recv()
	if err != nil || ev.GetPodSandboxStatus().GetId() != run.GetPodSandboxId() {
		t.Errorf("event through the proxy = %v, %v; want the sandbox's", ev, err)
	}
	if got := p.Calls("ListPodSandbox"); got != 1 {
		t.Errorf("Calls(ListPodSandbox) = %d; want 1", got)
	}
}

// TestFaults: an error for the next calls, then the runtime again; a
// delay; a hang released by Clear; a hang the caller gives up on.
func TestFaults(t *testing.T) {
	p, c, _ := start(t)
	p.Inject(Fault{Method: "ListPodSandbox", Code: codes.Unavailable, Times: 2})
	for i := range 2 {
		if err := listSandboxes(c); !errors.Is(err, cri.ErrUnavailable) {
			t.Errorf("call %d = %v; want Unavailable", i, err)
		}
	}
	if err := listSandboxes(c); err != nil {
		t.Errorf("after the fault was spent: %v", err)
	}
	p.Inject(Fault{Method: "ListPodSandbox", Code: codes.Unknown, Message: "PullImage failed", Times: 1})
	if err := listSandboxes(c); err == nil || !strings.Contains(err.Error(), "PullImage failed") {
		t.Errorf("call with a message = %v; want the fault's message", err)
	}

	p.Inject(Fault{Method: "/runtime.v1.RuntimeService/ListPodSandbox", Delay: 300 * time.Millisecond, Times: 1})
	began := time.Now()
	if err := listSandboxes(c); err != nil || time.Since(began) < 300*time.Millisecond {
		t.Errorf("delayed call = %v after %v; want success after 300ms", err, time.Since(began))
	}

	p.Inject(Fault{Method: "ListPodSandbox", Hang: true})
	done := make(chan error, 1)
	go func() { done <- listSandboxes(c) }()
	select {
	case err := <-done:
		t.Fatalf("a hung call returned: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	p.Clear()
	if err := <-done; err != nil {
		t.Errorf("a hung call released by Clear = %v; want success", err)
	}

	p.Inject(Fault{Method: "Version", Hang: true})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := c.Runtime.Version(ctx, &runtimeapi.VersionRequest{}); err == nil {
		t.Error("a hung call returned success before Clear")
	}
	if err := listSandboxes(c); err != nil {
		t.Errorf("another method while Version hangs: %v", err)
	}
}

func TestPick(t *testing.T) {
	faults := []Fault{{Method: "A", Times: 1}, {Method: "B", Times: 2}, {Method: "C"}}
	for _, tc := range []struct {
		method string
		want   string
		left   []string
	}{
		{"/s/A", "A", []string{"B", "C"}},
		{"/s/B", "B", []string{"B", "C"}},
		{"/s/B", "B", []string{"C"}},
		{"/s/C", "C", []string{"C"}},
		{"/s/D", "", []string{"C"}},
	} {
		f, left := pick(faults, tc.method)
		got := ""
		if f != nil {
			got = f.Method
		}
		var names []string
		for _, l := range left {
			names = append(names, l.Method)
		}
		if got != tc.want || !cmp.Equal(names, tc.left) {
			t.Errorf("pick(%s) = %q, %v; want %q, %v", tc.method, got, names, tc.want, tc.left)
		}
		faults = left
	}
}
