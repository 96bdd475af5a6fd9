package kuberuntime

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// targetEvents records events as "target Type Reason message", target the
// container's name or "pod" for an event about the pod itself.
type targetEvents struct {
	mu  sync.Mutex
	all []string
}

func (e *targetEvents) ContainerEventf(_ *corev1.Pod, container, eventType, reason, format string, args ...any) {
	e.add(container, eventType, reason, fmt.Sprintf(format, args...))
}

func (e *targetEvents) Eventf(_ *corev1.Pod, eventType, reason, format string, args ...any) {
	e.add("pod", eventType, reason, fmt.Sprintf(format, args...))
}

func (e *targetEvents) add(target, eventType, reason, msg string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.all = append(e.all, target+" "+eventType+" "+reason+" "+msg)
}

func (e *targetEvents) take() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := e.all
	e.all = nil
	return out
}

// imageVolumePod is basePod with the image volumes "data" (mounted twice
// by app, once with a subPath) and "unused" (mounted by no container).
func imageVolumePod(policy corev1.PullPolicy) *corev1.Pod {
	pod := basePod()
	pod.Spec.Volumes = []corev1.Volume{
		{Name: "data", VolumeSource: corev1.VolumeSource{Image: &corev1.ImageVolumeSource{Reference: "example.test/data:v1", PullPolicy: policy}}},
		{Name: "unused", VolumeSource: corev1.VolumeSource{Image: &corev1.ImageVolumeSource{Reference: "example.test/missing:v1"}}},
	}
	pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{
		{Name: "data", MountPath: "/data"},
		{Name: "data", MountPath: "/conf", SubPath: "etc/app"},
	}
	return pod
}

// imageVolumeDirs is what the volume manager gives for imageVolumePod:
// no host directory for an image volume.
var imageVolumeDirs = map[string]string{"data": "", "unused": ""}

// startCounts records Config.Observe.ImageVolumesStarted calls as
// "requested/mounts/failed".
type startCounts []string

func (s *startCounts) started(requested, mounts int, failed bool) {
	*s = append(*s, fmt.Sprintf("%d/%d/%v", requested, mounts, failed))
}

func TestImageVolumeMountedByTheRuntime(t *testing.T) {
	rec := &targetEvents{}
	var counts startCounts
	e := newEnv(t, func(c *Config) { c.Recorder, c.Observe.ImageVolumesStarted = rec, counts.started })
	e.fake.AddImage("busybox:1.36")
	e.fake.AllowPull("example.test/data:v1")
	pod := imageVolumePod(corev1.PullIfNotPresent)
	res, err := e.apply(pod, e.status(pod), nil, imageVolumeDirs)
	if err != nil || len(res.Failures) != 0 {
		t.Fatalf("Apply = %+v, %v; want the container started", res.Failures, err)
	}
	e.running(pod, "app")
	cfgs := e.fake.ContainerConfigs()
	if len(cfgs) != 1 {
		t.Fatalf("%d containers created, want 1", len(cfgs))
	}
	id := e.fake.AddImage("example.test/data:v1") // present: returns its ID
	want := map[string]*runtimeapi.Mount{
		"/data": {ContainerPath: "/data", Readonly: true, Image: &runtimeapi.ImageSpec{Image: id, UserSpecifiedImage: "example.test/data:v1", Annotations: pod.Annotations}},
		"/conf": {ContainerPath: "/conf", Readonly: true, ImageSubPath: "etc/app",
			Image: &runtimeapi.ImageSpec{Image: id, UserSpecifiedImage: "example.test/data:v1", Annotations: pod.Annotations}},
	}
	for _, m := range cfgs[0].GetMounts() {
		w, ok := want[m.GetContainerPath()]
		if !ok {
			continue
		}
		delete(want, m.GetContainerPath())
		if m.GetHostPath() != "" || m.GetReadonly() != w.Readonly || m.GetImageSubPath() != w.ImageSubPath ||
			m.GetImage().GetImage() != w.Image.Image || m.GetImage().GetUserSpecifiedImage() != w.Image.UserSpecifiedImage {
			t.Errorf("mount %s = %v, want %v", m.GetContainerPath(), m, w)
		}
	}
	if len(want) != 0 {
		t.Errorf("mounts %v missing", want)
	}
	evs := rec.take()
	for _, w := range []string{`pod Normal Pulling Pulling image "example.test/data:v1"`, `app Normal Pulled Container image "busybox:1.36" already present on machine`} {
		if !slices.Contains(evs, w) {
			t.Errorf("events %q lack %q", evs, w)
		}
	}
	for _, ev := range evs {
		if strings.Contains(ev, "example.test/missing") {
			t.Errorf("the unused image volume was pulled: %q", ev)
		}
	}
	if want := (startCounts{"1/2/false"}); !slices.Equal(counts, want) {
		t.Errorf("image volume starts counted %q, want %q (one volume, two mounts)", counts, want)
	}
}

// TestImageVolumeMountRefusedIsCounted: a runtime refusing the container
// with ImageVolumeMountFailed counts its image volume mounts as failed,
// as upstream's metrics do; a pull failure counts nothing.
func TestImageVolumeMountRefusedIsCounted(t *testing.T) {
	var counts startCounts
	e := newEnv(t, func(c *Config) { c.Observe.ImageVolumesStarted = counts.started })
	e.fake.AddImage("busybox:1.36")
	pod := imageVolumePod(corev1.PullIfNotPresent)
	e.syncImageVolumes(pod) // example.test/data:v1 cannot be pulled
	if len(counts) != 0 {
		t.Errorf("a pull failure counted %q, want nothing", counts)
	}
	e.fake.AllowPull("example.test/data:v1")
	e.fake.InjectError("CreateContainer", status.Error(codes.Unknown, "ImageVolumeMountFailed: no snapshot for the image"))
	e.clock.Step(time.Minute) // past the pull back-off
	if f := e.syncImageVolumes(pod)["app"]; f.Reason != ReasonCreateContainerError {
		t.Fatalf("failure = %+v, want CreateContainerError", f)
	}
	if want := (startCounts{"1/2/true"}); !slices.Equal(counts, want) {
		t.Errorf("image volume starts counted %q, want %q", counts, want)
	}
}

func TestImageVolumePullFailureHoldsTheContainer(t *testing.T) {
	rec := &targetEvents{}
	e := newEnv(t, func(c *Config) { c.Recorder = rec })
	e.fake.AddImage("busybox:1.36")
	pod := imageVolumePod(corev1.PullIfNotPresent)
	if f := e.syncImageVolumes(pod)["app"]; f.Reason != ReasonErrImagePull {
		t.Fatalf("failure = %+v, want ErrImagePull", f)
	}
	if n := len(e.fake.ContainerConfigs()); n != 0 {
		t.Fatalf("%d containers created with their image volume missing", n)
	}
	evs := rec.take()
	for _, w := range []string{`pod Normal Pulling Pulling image "example.test/data:v1"`, "app Warning Failed Error: ErrImagePull"} {
		if !slices.Contains(evs, w) {
			t.Errorf("events %q lack %q", evs, w)
		}
	}
	if f := e.syncImageVolumes(pod)["app"]; f.Reason != ReasonImagePullBackOff {
		t.Errorf("next sync: failure = %+v, want ImagePullBackOff", f)
	}
}

func TestImageVolumeNeverPolicyAbsent(t *testing.T) {
	e := newEnv(t)
	e.fake.AddImage("busybox:1.36")
	e.fake.AllowPull("example.test/data:v1")
	pod := imageVolumePod(corev1.PullNever)
	want := `Container image "example.test/data:v1" is not present with pull policy of Never`
	if f := e.syncImageVolumes(pod)["app"]; f.Reason != ReasonErrImageNeverPull || f.Message != want {
		t.Errorf("failure = %+v, want ErrImageNeverPull %q", f, want)
	}
}

// syncImageVolumes is sync with imageVolumePod's volume directories.
func (e *env) syncImageVolumes(pod *corev1.Pod) map[string]runtimestate.StartFailure {
	e.t.Helper()
	res, err := e.apply(pod, e.status(pod), nil, imageVolumeDirs)
	if err != nil {
		e.t.Fatalf("Apply: %v", err)
	}
	return res.Failures
}
