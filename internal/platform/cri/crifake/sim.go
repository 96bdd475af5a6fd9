package crifake

import (
	"context"
	"fmt"
	"math"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// simKnobs are what a simulated node (berth simulate) turns beyond the
// tests' knobs: call latencies, no call log (it would grow for as long as
// the node runs), every image pullable, and a pod subnet of its own.
type simKnobs struct {
	// latency delays each named method's calls before they run.
	latency map[string]time.Duration
	// noCallLog: Calls stays empty.
	noCallLog bool
	// pullAll: PullImage fetches every ref.
	pullAll bool
	// podSubnet, when set, is the first three octets of the pod IPs
	// ("10.0.7"); the default hands out 10.88.x.y.
	podSubnet string
	// failures fail a share of each named method's calls.
	failures map[string]*failure
}

// failure fails the share rate of a method's calls with err, spread
// evenly and the same in every run: call n (from 1) fails when
// floor(n*rate) passes floor((n-1)*rate), so a rate of 0.25 fails the
// 4th, 8th, 12th ... call and 1 fails all.
type failure struct {
	rate  float64
	err   error
	calls uint64
}

// fails counts a call and reports whether it fails.
func (f *failure) fails() bool {
	f.calls++
	return math.Floor(float64(f.calls)*f.rate) > math.Floor(float64(f.calls-1)*f.rate)
}

// SetLatency makes every later call of method (a short name such as
// "RunPodSandbox", "CreateContainer", "StartContainer", "PullImage") wait
// d on the fake's clock before it runs; 0 removes the delay. A call whose
// context ends while it waits fails with the context's error.
func (f *Fake) SetLatency(method string, d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.knobs.sim.latency == nil {
		f.knobs.sim.latency = map[string]time.Duration{}
	}
	if d <= 0 {
		delete(f.knobs.sim.latency, method)
		return
	}
	f.knobs.sim.latency[method] = d
}

// SetFailureRate makes the share rate (0 to 1) of method's later calls
// fail with err before they run, spread evenly over the calls (see
// failure); 0 removes it. It comes after InjectError's one-shot errors.
func (f *Fake) SetFailureRate(method string, rate float64, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if rate <= 0 {
		delete(f.knobs.sim.failures, method)
		return
	}
	if f.knobs.sim.failures == nil {
		f.knobs.sim.failures = map[string]*failure{}
	}
	f.knobs.sim.failures[method] = &failure{rate: min(rate, 1), err: err}
}

// DisableCallLog stops recording calls (Calls stays empty), for a fake
// that runs for hours.
func (f *Fake) DisableCallLog() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.knobs.sim.noCallLog = true
	f.calls = nil
}

// AllowAllPulls lets PullImage fetch any ref.
func (f *Fake) AllowAllPulls() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.knobs.sim.pullAll = true
}

// SetPodSubnet makes later sandboxes' IPs <subnet>.2, <subnet>.3, ...
// <subnet>.254, then around again; subnet is three octets ("10.0.7").
func (f *Fake) SetPodSubnet(subnet string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.knobs.sim.podSubnet = subnet
}

// nextIP hands out the next pod IP. Callers hold mu.
func (f *Fake) nextIP() string {
	n := f.world.ips
	f.world.ips++
	if s := f.knobs.sim.podSubnet; s != "" {
		return fmt.Sprintf("%s.%d", s, n%253+2)
	}
	return fmt.Sprintf("10.88.%d.%d", n/253, n%253+2)
}

// delay waits the latency set for method, if any.
func (f *Fake) delay(ctx context.Context, method string) error {
	f.mu.Lock()
	d := f.knobs.sim.latency[method]
	f.mu.Unlock()
	if d <= 0 {
		return nil
	}
	select {
	case <-f.clock.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Running is a running container as a simulated node's application
// model sees it.
type Running struct {
	ID, Name  string
	StartedAt time.Time
	// PodAnnotations are its sandbox's annotations: the pod's, as berth
	// passes them.
	PodAnnotations map[string]string
	// Pod is its sandbox's metadata: the pod's name, namespace and UID.
	Pod PodRef
	// MemoryUsage is what ContainerStats reports (SetMemoryUsage).
	MemoryUsage uint64
}

// PodRef names a sandbox's pod.
type PodRef struct{ Name, Namespace, UID string }

// RunningContainers returns the running containers in creation order.
func (f *Fake) RunningContainers() []Running {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Running
	for _, c := range f.sortedContainers() {
		if c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
			continue
		}
		r := Running{ID: c.id, Name: c.config.GetMetadata().GetName(), StartedAt: time.Unix(0, c.startedAt), MemoryUsage: c.memoryUsage}
		if s, ok := f.world.sandboxes[c.sandboxID]; ok {
			r.PodAnnotations = copyMap(s.config.GetAnnotations())
			md := s.config.GetMetadata()
			r.Pod = PodRef{Name: md.GetName(), Namespace: md.GetNamespace(), UID: md.GetUid()}
		}
		out = append(out, r)
	}
	return out
}

// StartedAt is when the container id started; false when it is not
// running.
func (f *Fake) StartedAt(id string) (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, err := f.findContainer(id)
	if err != nil || c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return time.Time{}, false
	}
	return time.Unix(0, c.startedAt), true
}
