package timeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

var t0 = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

// testPod has two init containers, two volumes and two images; web has a
// readiness probe.
func testPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "u1", CreationTimestamp: metav1.NewTime(t0.Add(-time.Second))},
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "init-a", Image: "busybox:1"}, {Name: "init-b", Image: "busybox:1"},
				{Name: "sidecar", Image: "busybox:1", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)}},
			Containers: []corev1.Container{{Name: "web", Image: "nginx:1", ReadinessProbe: &corev1.Probe{}}},
			Volumes:    []corev1.Volume{{Name: "data"}, {Name: "config"}},
		},
	}
}

func newTest(t *testing.T, max int) (*Recorder, *clocktesting.FakeClock) {
	t.Helper()
	clk := clocktesting.NewFakeClock(t0)
	r, err := New(Config{Clock: clk, MaxEntries: max})
	if err != nil {
		t.Fatal(err)
	}
	return r, clk
}

// stage runs one stage of d on the fake clock.
func stage(r *Recorder, clk *clocktesting.FakeClock, pod *corev1.Pod, name, target string, d time.Duration, bytes int64, note string, err error) {
	end := r.Begin(pod, name, target)
	clk.Step(d)
	end(bytes, note, err)
}

func at(d time.Duration) *time.Time { t := t0.Add(d); return &t }

func initStatus(name, id string, start time.Time, finished *time.Time, code int32) corev1.ContainerStatus {
	cs := corev1.ContainerStatus{Name: name, ContainerID: id}
	if finished == nil {
		cs.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(start)}
	} else {
		cs.State.Terminated = &corev1.ContainerStateTerminated{StartedAt: metav1.NewTime(start), FinishedAt: metav1.NewTime(*finished), ExitCode: code}
	}
	return cs
}

func TestPodStart(t *testing.T) {
	r, clk := newTest(t, 0)
	pod := testPod()
	ms := time.Millisecond
	stage(r, clk, pod, StageAdmitted, "", 1*ms, 0, "", nil)
	stage(r, clk, pod, StageVolume, "data", 10*ms, 0, "", nil)
	stage(r, clk, pod, StageVolume, "config", 20*ms, 0, "", nil)
	// The next sync sets the volumes up again: not recorded twice.
	stage(r, clk, pod, StageVolume, "data", 10*ms, 0, "", nil)
	stage(r, clk, pod, StageSandbox, "", 100*ms, 0, "", nil)                 // 31..131
	stage(r, clk, pod, StageImage, "busybox:1", 200*ms, 4096, "pulled", nil) // 141..341
	stage(r, clk, pod, StageContainerStart, "init-a", 50*ms, 0, "", nil)     // 341..391
	r.ObserveStatus("u1", &corev1.PodStatus{InitContainerStatuses: []corev1.ContainerStatus{initStatus("init-a", "c1", t0.Add(390*ms), nil, 0),
		initStatus("sidecar", "s1", t0.Add(390*ms), nil, 0)}})
	clk.Step(500 * ms) // 891
	r.ObserveStatus("u1", &corev1.PodStatus{InitContainerStatuses: []corev1.ContainerStatus{initStatus("init-a", "c1", t0.Add(390*ms), at(880*ms), 0)}})
	stage(r, clk, pod, StageImage, "busybox:1", 5*ms, 4096, "already present", nil) // 891..896
	stage(r, clk, pod, StageContainerStart, "init-b", 50*ms, 0, "", nil)            // 896..946
	// init-b's run is first seen once it has exited.
	r.ObserveStatus("u1", &corev1.PodStatus{InitContainerStatuses: []corev1.ContainerStatus{initStatus("init-b", "c2", t0.Add(945*ms), at(1000*ms), 0)}})
	clk.Step(54 * ms)                                                       // 1000
	stage(r, clk, pod, StageImage, "nginx:1", 300*ms, 1<<20, "pulled", nil) // 1000..1300
	stage(r, clk, pod, StageContainerStart, "web", 40*ms, 0, "", nil)       // 1300..1340
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(t0.Add(1339 * ms))}}
	r.ObserveStatus("u1", &corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "web", State: running}}})
	clk.Step(660 * ms) // 2000
	r.ObserveStatus("u1", &corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "web", State: running, Ready: true}}})
	r.StatusWritten(pod, &corev1.PodStatus{Phase: corev1.PodPending}, t0.Add(1100*ms)) // not Running: nothing
	r.StatusWritten(pod, &corev1.PodStatus{Phase: corev1.PodRunning}, t0.Add(1400*ms))
	r.StatusWritten(pod, &corev1.PodStatus{Phase: corev1.PodRunning}, t0.Add(2500*ms)) // only the first
	clk.Step(time.Second)

	got, ok := r.Get("ns", "web")
	if !ok {
		t.Fatal("no timeline")
	}
	s := func(name, target string, start, end time.Duration, bytes int64, note string) Stage {
		return Stage{Name: name, Target: target, Start: t0.Add(start), End: at(end), DurationSeconds: (end - start).Seconds(),
			Outcome: OutcomeOK, Message: note, Bytes: bytes}
	}
	want := Timeline{Pod: "ns/web", UID: "u1", Created: t0.Add(-time.Second), Now: t0.Add(3000 * ms), Stages: []Stage{
		s(StageAdmitted, "", 0, 1*ms, 0, ""),
		s(StageVolume, "data", 1*ms, 11*ms, 0, ""),
		s(StageVolume, "config", 11*ms, 31*ms, 0, ""),
		s(StageSandbox, "", 41*ms, 141*ms, 0, ""),
		s(StageImage, "busybox:1", 141*ms, 341*ms, 4096, "pulled"),
		s(StageContainerStart, "init-a", 341*ms, 391*ms, 0, ""),
		s(StageInitContainer, "init-a", 390*ms, 880*ms, 0, ""),
		s(StageImage, "busybox:1", 891*ms, 896*ms, 4096, "already present"),
		s(StageContainerStart, "init-b", 896*ms, 946*ms, 0, ""),
		s(StageInitContainer, "init-b", 945*ms, 1000*ms, 0, ""),
		s(StageImage, "nginx:1", 1000*ms, 1300*ms, 1<<20, "pulled"),
		s(StageContainerStart, "web", 1300*ms, 1340*ms, 0, ""),
		s(StageProbe, "web readiness", 1339*ms, 2000*ms, 0, ""),
		s(StageStatusWritten, "", 1340*ms, 1400*ms, 0, ""),
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("timeline (-want +got):\n%s", diff)
	}
	for _, st := range got.Stages {
		if st.DurationSeconds < 0 || st.End.Sub(st.Start).Seconds() != st.DurationSeconds {
			t.Errorf("stage %s %s: duration %v inconsistent with %s..%s", st.Name, st.Target, st.DurationSeconds, st.Start, st.End)
		}
	}
}

// TestRetries: failed attempts stay as failed entries beside the one
// that succeeded; a failed volume is recorded at every attempt; an init
// container that failed and ran again is two runs.
func TestRetries(t *testing.T) {
	r, clk := newTest(t, 0)
	pod := testPod()
	sec := time.Second
	stage(r, clk, pod, StageVolume, "config", sec, 0, "", errors.New(`configmap "cfg" not found`))
	stage(r, clk, pod, StageVolume, "config", sec, 0, "", errors.New(`configmap "cfg" not found`))
	stage(r, clk, pod, StageVolume, "config", sec, 0, "", nil)
	stage(r, clk, pod, StageVolume, "config", sec, 0, "", nil) // set up: not again
	stage(r, clk, pod, StageImage, "nginx:1", sec, 0, "", errors.New("ErrImagePull: not found"))
	stage(r, clk, pod, StageImage, "nginx:1", sec, 0, "", errors.New("ImagePullBackOff: Back-off pulling image"))
	stage(r, clk, pod, StageImage, "nginx:1", sec, 10, "pulled", nil)
	r.ObserveStatus("u1", &corev1.PodStatus{InitContainerStatuses: []corev1.ContainerStatus{initStatus("init-a", "c1", t0, at(sec), 1)}})
	r.ObserveStatus("u1", &corev1.PodStatus{InitContainerStatuses: []corev1.ContainerStatus{initStatus("init-a", "c1", t0, at(sec), 1)}}) // same run
	r.ObserveStatus("u1", &corev1.PodStatus{InitContainerStatuses: []corev1.ContainerStatus{initStatus("init-a", "c2", t0.Add(2*sec), nil, 0)}})

	if n := len(r.pods["u1"].inits); n != 1 {
		t.Errorf("the record keeps %d init container runs, want the latest of init-a's only", n)
	}

	got, _ := r.Get("ns", "web")
	type row struct {
		Name, Target string
		Outcome      Outcome
		Message      string
	}
	var rows []row
	for _, s := range got.Stages {
		rows = append(rows, row{s.Name, s.Target, s.Outcome, s.Message})
	}
	want := []row{
		{StageVolume, "config", OutcomeFailed, `configmap "cfg" not found`},
		{StageInitContainer, "init-a", OutcomeFailed, "exit code 1"},
		{StageVolume, "config", OutcomeFailed, `configmap "cfg" not found`},
		{StageVolume, "config", OutcomeOK, ""},
		{StageInitContainer, "init-a", OutcomeRunning, ""},
		{StageImage, "nginx:1", OutcomeFailed, "ErrImagePull: not found"},
		{StageImage, "nginx:1", OutcomeFailed, "ImagePullBackOff: Back-off pulling image"},
		{StageImage, "nginx:1", OutcomeOK, "pulled"},
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("stages (-want +got):\n%s", diff)
	}
}

// TestRunning: a stage begun and not ended is running, its duration up to
// the read; ending it twice keeps the first end.
func TestRunning(t *testing.T) {
	r, clk := newTest(t, 0)
	end := r.Begin(testPod(), StageImage, "huge:1")
	clk.Step(90 * time.Second)
	got, _ := r.Get("ns", "web")
	if s := got.Stages[0]; s.Outcome != OutcomeRunning || s.End != nil || s.DurationSeconds != 90 {
		t.Errorf("running pull = %+v, want running for 90s with no end", s)
	}
	end(1, "pulled", nil)
	clk.Step(time.Second)
	end(2, "", errors.New("late"))
	got, _ = r.Get("ns", "web")
	if s := got.Stages[0]; s.Outcome != OutcomeOK || s.DurationSeconds != 90 || s.Bytes != 1 {
		t.Errorf("ended pull = %+v, want ok after 90s, 1 byte", s)
	}
}

// TestBound: past MaxEntries the oldest entries go, counted; an end of a
// dropped entry is ignored.
func TestBound(t *testing.T) {
	r, clk := newTest(t, 4)
	pod := testPod()
	first := r.Begin(pod, StageSandbox, "")
	for i := range 9 {
		stage(r, clk, pod, StageContainerStart, fmt.Sprint(i), time.Second, 0, "", nil)
	}
	first(0, "", nil)
	got, _ := r.Get("ns", "web")
	if got.Dropped != 6 || len(got.Stages) != 4 {
		t.Fatalf("dropped %d, kept %d stages, want 6 and 4", got.Dropped, len(got.Stages))
	}
	for i, s := range got.Stages {
		if want := fmt.Sprint(i + 5); s.Target != want || s.Outcome != OutcomeOK {
			t.Errorf("stage %d = %s %s, want container-start %s ok", i, s.Name, s.Target, want)
		}
	}
}

// TestForget: Forget ends the pod's timeline and its name; a pod of the
// same name created again has its own, which the old one's Forget keeps.
func TestForget(t *testing.T) {
	r, clk := newTest(t, 0)
	old := testPod()
	end := r.Begin(old, StageAdmitted, "")
	renewed := testPod()
	renewed.UID = "u2"
	stage(r, clk, renewed, StageAdmitted, "", time.Second, 0, "", nil)
	if got, _ := r.Get("ns", "web"); got.UID != "u2" {
		t.Errorf("Get(ns, web) is pod %s, want the latest, u2", got.UID)
	}
	if diff := cmp.Diff([]string{"u1", "u2"}, sortedHeld(r)); diff != "" {
		t.Errorf("HeldPods (-want +got):\n%s", diff)
	}
	r.Forget(context.Background(), "u1")
	end(0, "", nil) // ended after it was forgotten: nothing
	r.ObserveStatus("u1", &corev1.PodStatus{Phase: corev1.PodRunning})
	if got, ok := r.Get("ns", "web"); !ok || got.UID != "u2" {
		t.Errorf("after Forget(u1): Get = %s, %t; want u2", got.UID, ok)
	}
	r.Forget(context.Background(), "u2")
	r.Forget(context.Background(), "u2") // idempotent
	if _, ok := r.Get("ns", "web"); ok {
		t.Error("Get found a forgotten pod")
	}
	if held := r.HeldPods(); len(held) != 0 {
		t.Errorf("HeldPods after Forget = %v, want none", held)
	}
}

func TestNewNeedsClock(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Error("New without a clock succeeded")
	}
}

// TestNil: a nil Recorder records nothing and does not panic.
func TestNil(t *testing.T) {
	var r *Recorder
	r.Begin(testPod(), StageAdmitted, "")(0, "", nil)
	r.ObserveStatus("u1", &corev1.PodStatus{})
	r.StatusWritten(testPod(), &corev1.PodStatus{Phase: corev1.PodRunning}, t0)
	r.Forget(context.Background(), "u1")
	if _, ok := r.Get("ns", "web"); ok || r.HeldPods() != nil {
		t.Error("a nil Recorder holds something")
	}
}

func sortedHeld(r *Recorder) []string {
	var out []string
	for _, uid := range r.HeldPods() {
		out = append(out, string(uid))
	}
	slices.Sort(out)
	return out
}

// TestProgress: a running pull's readings replace each other on its own
// stage, an earlier failed pull of the same image keeps none, and the last
// reading stays once the pull ended.
func TestProgress(t *testing.T) {
	r, clk := newTest(t, 0)
	pod := testPod()
	r.Begin(pod, StageImage, "nginx:1")(0, "", errors.New("ErrImagePull: 500"))
	clk.Step(time.Second)
	end := r.Begin(pod, StageImage, "nginx:1")
	r.Progress(pod, StageImage, "nginx:1", Progress{DoneBytes: 10, TotalBytes: 100, BytesPerSecond: 5})
	r.Progress(pod, StageImage, "nginx:1", Progress{DoneBytes: 60, TotalBytes: 100, BytesPerSecond: 50})
	r.Progress(pod, StageImage, "busybox:1", Progress{DoneBytes: 1}) // no such running stage
	end(100, "pulled", nil)
	r.Progress(pod, StageImage, "nginx:1", Progress{DoneBytes: 99}) // ended: no running stage
	tl, _ := r.Get("ns", "web")
	var got []*Progress
	for _, s := range tl.Stages {
		if s.Name == StageImage {
			got = append(got, s.Progress)
		}
	}
	want := []*Progress{nil, {DoneBytes: 60, TotalBytes: 100, BytesPerSecond: 50}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("image stages' progress (-want +got):\n%s", diff)
	}
}
