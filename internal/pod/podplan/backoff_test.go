package podplan

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

func TestComputeBackoff(t *testing.T) {
	pod := newPod(corev1.RestartPolicyAlways, nil, []string{"web"})
	h := hashOf(pod, "web")
	// crashed is the runtime after the web container exited 1 at finished.
	crashed := func(finished time.Duration) *runtimestate.Pod {
		return rtPod(sandboxes(readySandbox("sb-0", 0)),
			exited(pod, "web", "web-2", "sb-0", 1, at(finished)),
			exited(pod, "web", "web-1", "sb-0", 1, at(-time.Hour)))
	}
	start := Actions{SandboxID: "sb-0", StartContainers: []int{0}}
	withBackoff := func(a Actions, b map[string]BackoffEntry) Actions { a.Backoff = b; return a }
	waiting := func(delay string, b map[string]BackoffEntry) Actions {
		return Actions{

			Waiting: map[string]Waiting{"web": {
				Reason:  "CrashLoopBackOff",
				Message: "back-off " + delay + " restarting failed container=web pod=" + testPodRef,
			}},
			Backoff: b,
		}
	}
	tests := []struct {
		name    string
		rt      *runtimestate.Pod
		backoff map[string]BackoffEntry
		now     time.Duration
		policy  BackoffPolicy
		want    Actions
	}{
		{
			name: "first start does not touch backoff",
			rt:   rtPod(sandboxes(readySandbox("sb-0", 0))),
			now:  0,
			want: start,
		},
		{
			name: "first crash restarts at once with delay 10s",
			rt:   crashed(0),
			now:  0,
			want: withBackoff(start, map[string]BackoffEntry{"web": entry(10*time.Second, at(0), h)}),
		},
		{
			name:    "second crash within 10s: CrashLoopBackOff",
			rt:      crashed(5 * time.Second),
			backoff: map[string]BackoffEntry{"web": entry(10*time.Second, at(0), h)},
			now:     14 * time.Second,
			want:    waiting("10s", map[string]BackoffEntry{"web": entry(10*time.Second, at(0), h)}),
		},
		{
			name:    "10s after the crash: start, delay 20s",
			rt:      crashed(5 * time.Second),
			backoff: map[string]BackoffEntry{"web": entry(10*time.Second, at(0), h)},
			now:     15 * time.Second,
			want:    withBackoff(start, map[string]BackoffEntry{"web": entry(20*time.Second, at(15*time.Second), h)}),
		},
		{
			name:    "long delays print as durations",
			rt:      crashed(time.Minute),
			backoff: map[string]BackoffEntry{"web": entry(160*time.Second, at(50*time.Second), h)},
			now:     time.Minute + time.Second,
			want:    waiting("2m40s", map[string]BackoffEntry{"web": entry(160*time.Second, at(50*time.Second), h)}),
		},
		{
			name:    "doubling caps at 300s",
			rt:      crashed(time.Minute),
			backoff: map[string]BackoffEntry{"web": entry(160*time.Second, at(0), h)},
			now:     4 * time.Minute,
			want:    withBackoff(start, map[string]BackoffEntry{"web": entry(300*time.Second, at(4*time.Minute), h)}),
		},
		{
			name:    "at the cap it stays at 300s",
			rt:      crashed(time.Minute),
			backoff: map[string]BackoffEntry{"web": entry(300*time.Second, at(0), h)},
			now:     7 * time.Minute,
			want:    withBackoff(start, map[string]BackoffEntry{"web": entry(300*time.Second, at(7*time.Minute), h)}),
		},
		{
			name:    "ran more than 10 min since the last restart: reset to 10s",
			rt:      crashed(10*time.Minute + time.Second),
			backoff: map[string]BackoffEntry{"web": entry(300*time.Second, at(0), h)},
			now:     10*time.Minute + time.Second,
			want:    withBackoff(start, map[string]BackoffEntry{"web": entry(10*time.Second, at(10*time.Minute+time.Second), h)}),
		},
		{
			name:    "exactly 10 min is not yet expired",
			rt:      crashed(10 * time.Minute),
			backoff: map[string]BackoffEntry{"web": entry(300*time.Second, at(0), h)},
			now:     10 * time.Minute,
			want:    waiting("5m0s", map[string]BackoffEntry{"web": entry(300*time.Second, at(0), h)}),
		},
		{
			name:    "spec changed since the entry: ignored, restart at 10s",
			rt:      crashed(5 * time.Second),
			backoff: map[string]BackoffEntry{"web": entry(40*time.Second, at(0), h+1)},
			now:     6 * time.Second,
			want:    withBackoff(start, map[string]BackoffEntry{"web": entry(10*time.Second, at(6*time.Second), h)}),
		},
		{
			name: "entries of removed containers are dropped",
			rt:   rtPod(sandboxes(readySandbox("sb-0", 0)), running(pod, "web", "web-1", "sb-0")),
			backoff: map[string]BackoffEntry{
				"web":  entry(20*time.Second, at(0), h),
				"gone": entry(20*time.Second, at(0), 7),
			},
			now:  time.Minute,
			want: Actions{Backoff: map[string]BackoffEntry{"web": entry(20*time.Second, at(0), h)}},
		},
		{
			name:    "entries untouched for more than 10 min are dropped",
			rt:      rtPod(sandboxes(readySandbox("sb-0", 0)), running(pod, "web", "web-1", "sb-0")),
			backoff: map[string]BackoffEntry{"web": entry(20*time.Second, at(0), h)},
			now:     11 * time.Minute,
			want:    Actions{},
		},
		{
			name:    "custom policy",
			rt:      crashed(5 * time.Second),
			backoff: map[string]BackoffEntry{"web": entry(time.Second, at(0), h)},
			now:     6 * time.Second,
			policy:  BackoffPolicy{Initial: time.Second, Max: 3 * time.Second},
			want:    withBackoff(start, map[string]BackoffEntry{"web": entry(2*time.Second, at(6*time.Second), h)}),
		},
		{
			name:   "maxContainerRestartPeriod below 10s lowers the initial delay to it",
			rt:     crashed(0),
			now:    0,
			policy: BackoffPolicy{Max: 5 * time.Second},
			want:   withBackoff(start, map[string]BackoffEntry{"web": entry(5*time.Second, at(0), h)}),
		},
		{
			name:    "maxContainerRestartPeriod caps the doubling",
			rt:      crashed(5 * time.Second),
			backoff: map[string]BackoffEntry{"web": entry(20*time.Second, at(0), h)},
			now:     25 * time.Second,
			policy:  BackoffPolicy{Max: 30 * time.Second},
			want:    withBackoff(start, map[string]BackoffEntry{"web": entry(30*time.Second, at(25*time.Second), h)}),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := Inputs{Pod: pod, Runtime: tt.rt, Backoff: tt.backoff, Now: at(tt.now), Policy: tt.policy}
			if diff := cmp.Diff(tt.want, Compute(in)); diff != "" {
				t.Errorf("Compute() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// A container held back by its backoff still counts as wanted: the pod is
// not torn down while its only container waits.
func TestComputeBackoffKeepsPod(t *testing.T) {
	pod := newPod(corev1.RestartPolicyAlways, nil, []string{"web"})
	h := hashOf(pod, "web")
	in := Inputs{
		Pod:     pod,
		Runtime: rtPod(sandboxes(readySandbox("sb-0", 0)), exited(pod, "web", "web-1", "sb-0", 1, at(0))),
		Backoff: map[string]BackoffEntry{"web": entry(10*time.Second, at(0), h)},
		Now:     at(time.Second),
	}
	got := Compute(in)
	if got.KillPod || len(got.StartContainers) != 0 || got.SandboxID != "" || got.Waiting["web"].Reason != "CrashLoopBackOff" {
		t.Errorf("Compute() = %+v, want web waiting in CrashLoopBackOff and the pod kept", got)
	}
}

// Init containers pass the same gate.
func TestComputeBackoffInitContainer(t *testing.T) {
	pod := newPod(corev1.RestartPolicyOnFailure, []string{"setup"}, []string{"web"})
	h := hashOf(pod, "setup")
	in := Inputs{
		Pod:     pod,
		Runtime: rtPod(sandboxes(readySandbox("sb-0", 0)), exited(pod, "setup", "setup-1", "sb-0", 3, at(0))),
		Backoff: map[string]BackoffEntry{"setup": entry(20*time.Second, at(0), h)},
		Now:     at(10 * time.Second),
	}
	want := Actions{

		Waiting: map[string]Waiting{"setup": {
			Reason:  "CrashLoopBackOff",
			Message: "back-off 20s restarting failed container=setup pod=" + testPodRef,
		}},
		Backoff: map[string]BackoffEntry{"setup": entry(20*time.Second, at(0), h)},
	}
	if diff := cmp.Diff(want, Compute(in)); diff != "" {
		t.Errorf("Compute() mismatch (-want +got):\n%s", diff)
	}
}

// Compute must not modify the caller's backoff map.
func TestComputeDoesNotMutateInputs(t *testing.T) {
	pod := newPod(corev1.RestartPolicyAlways, nil, []string{"web"})
	h := hashOf(pod, "web")
	backoff := map[string]BackoffEntry{"web": entry(10*time.Second, at(0), h), "gone": entry(time.Second, at(0), 1)}
	before := map[string]BackoffEntry{"web": backoff["web"], "gone": backoff["gone"]}
	rt := rtPod(sandboxes(readySandbox("sb-0", 0)), exited(pod, "web", "web-1", "sb-0", 1, at(0)))
	podBefore := pod.DeepCopy()

	got := Compute(Inputs{Pod: pod, Runtime: rt, Backoff: backoff, Now: at(time.Minute)})

	if diff := cmp.Diff(before, backoff); diff != "" {
		t.Errorf("input backoff changed (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(podBefore, pod); diff != "" {
		t.Errorf("input pod changed (-before +after):\n%s", diff)
	}
	if got.Backoff["web"].Delay != 20*time.Second {
		t.Errorf("Backoff[web] = %+v, want delay 20s", got.Backoff["web"])
	}
}

func TestHashContainer(t *testing.T) {
	// The value is recorded on every container berth creates: a change here
	// restarts every running container after an upgrade. Change it only on
	// purpose.
	golden := corev1.Container{Name: "web", Image: "nginx:1.27"}
	if got, want := HashContainer(&golden), uint64(3858687139022584926); got != want {
		t.Errorf("HashContainer(golden) = %d, want %d", got, want)
	}
	base := corev1.Container{Name: "web", Image: "nginx:1.27", Env: []corev1.EnvVar{{Name: "A", Value: "1"}}}
	same := *base.DeepCopy()
	if HashContainer(&base) != HashContainer(&same) {
		t.Errorf("equal specs hash differently")
	}
	changes := map[string]func(c *corev1.Container){
		"image":   func(c *corev1.Container) { c.Image = "nginx:1.28" },
		"env":     func(c *corev1.Container) { c.Env[0].Value = "2" },
		"args":    func(c *corev1.Container) { c.Args = []string{"-v"} },
		"command": func(c *corev1.Container) { c.Command = []string{"sh"} },
	}
	for name, change := range changes {
		c := base.DeepCopy()
		change(c)
		if HashContainer(c) == HashContainer(&base) {
			t.Errorf("changing %s did not change the hash", name)
		}
	}
}

// The one back-off algorithm, as CrashLoopBackOff and the image pull
// back-off use it: client-go's flowcontrol.Backoff without jitter.
func TestBackoffPolicy(t *testing.T) {
	p := BackoffPolicy{Initial: 10 * time.Second, Max: 300 * time.Second}
	e := entry(40*time.Second, at(0), 7)
	tests := []struct {
		name      string
		e         BackoffEntry
		since, at time.Duration // Holds(e, since, at) and Next(e, since, at)
		holds     bool
		next      BackoffEntry
	}{
		{"zero entry holds nothing and starts at Initial", BackoffEntry{}, 0, 0, false, entry(10*time.Second, at(0), 0)},
		{"within the delay", e, 0, 39 * time.Second, true, entry(80*time.Second, at(39*time.Second), 7)},
		{"at the delay", e, 0, 40 * time.Second, false, entry(80*time.Second, at(40*time.Second), 7)},
		{"since later than the update", e, 30 * time.Second, 69 * time.Second, true, entry(80*time.Second, at(69*time.Second), 7)},
		{"capped at Max", entry(200*time.Second, at(0), 7), time.Minute, time.Minute, true, entry(300*time.Second, at(time.Minute), 7)},
		{"2*Max after the update is not expired", e, 10 * time.Minute, 10 * time.Minute, true, entry(80*time.Second, at(10*time.Minute), 7)},
		{"expired: holds nothing, starts over", e, 10*time.Minute + 1, 10*time.Minute + 1, false, entry(10*time.Second, at(10*time.Minute+1), 7)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := p.Holds(tt.e, at(tt.since), at(tt.at)); got != tt.holds {
				t.Errorf("Holds = %v, want %v", got, tt.holds)
			}
			if diff := cmp.Diff(tt.next, p.Next(tt.e, at(tt.since), at(tt.at))); diff != "" {
				t.Errorf("Next (-want +got):\n%s", diff)
			}
		})
	}
	if !p.Expired(e, at(10*time.Minute+1)) || p.Expired(e, at(10*time.Minute)) {
		t.Error("Expired must hold only more than 2*Max after the last update")
	}
}
