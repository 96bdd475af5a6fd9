package kuberuntime

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/berthk8s/berth/internal/pod/pleg"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// drainEvents returns the PLEG's published events as "type" strings, sorted.
func drainEvents(p *pleg.PLEG) []string {
	var out []string
	for {
		select {
		case e := <-p.Events():
			out = append(out, e.Type.String())
		default:
			sort.Strings(out)
			return out
		}
	}
}

// The on-demand relist over the CRI fake: after a sync started a pod and
// after a kill stopped it, RelistPod alone (no periodic relist) puts the
// pod's new state in the cache, answers a worker waiting for a status
// newer than its sync, and publishes the events a relist would.
func TestRelistPodOverTheCRIFake(t *testing.T) {
	e := newEnv(t)
	e.fake.AddImage("busybox:1.36")
	cache := pleg.NewCache()
	p, err := pleg.New(pleg.Config{Runtime: e.m, Cache: cache, Clock: e.clock, Period: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	pod := twoContainerPod()
	p.Relist(e.ctx) // the pod is not there yet
	steps := []struct {
		name       string
		act        func()
		wantEvents []string
		wantState  runtimestate.ContainerState
	}{
		{name: "sync starts the pod", act: func() { e.sync(pod) },
			wantEvents: []string{"ContainerStarted", "ContainerStarted", "ContainerStarted"}, wantState: runtimestate.ContainerRunning},
		{name: "kill stops it", act: func() {
			if err := e.m.KillPod(e.ctx, pod, e.status(pod), nil); err != nil {
				t.Fatal(err)
			}
		}, wantEvents: []string{"ContainerDied", "ContainerDied", "ContainerDied"}, wantState: runtimestate.ContainerExited},
	}
	for _, s := range steps {
		e.clock.Step(time.Second)
		s.act()
		lastSync := e.clock.Now()
		e.clock.Step(time.Millisecond)
		p.RelistPod(e.ctx, pod.UID)
		if diff := cmp.Diff(s.wantEvents, drainEvents(p)); diff != "" {
			t.Errorf("%s: events (-want +got):\n%s", s.name, diff)
		}
		ctx, cancel := context.WithTimeout(e.ctx, 5*time.Second)
		rt, err := cache.GetNewerThan(ctx, pod.UID, lastSync)
		cancel()
		if err != nil {
			t.Fatalf("%s: GetNewerThan(last sync) = %v", s.name, err)
		}
		for _, name := range []string{"app", "side"} {
			if c := rt.LatestContainer(name); c == nil || c.State != s.wantState {
				t.Errorf("%s: cached container %s = %+v, want %v", s.name, name, c, s.wantState)
			}
		}
	}
}
