package kuberuntime

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"
)

func TestVerifyRunAsNonRoot(t *testing.T) {
	tru, fls := true, false
	root, user := int64(0), int64(1000)
	const pod = `"web_default(uid-1)"`
	tests := []struct {
		name     string
		pod      *corev1.PodSecurityContext
		c        *corev1.SecurityContext
		uid      *int64
		username string
		want     string
	}{
		{name: "no runAsNonRoot", uid: &root},
		{name: "runAsNonRoot false", c: &corev1.SecurityContext{RunAsNonRoot: &fls}, uid: &root},
		{name: "runAsUser non-zero", c: &corev1.SecurityContext{RunAsNonRoot: &tru, RunAsUser: &user}, uid: &root},
		{
			name: "runAsUser 0",
			c:    &corev1.SecurityContext{RunAsNonRoot: &tru, RunAsUser: &root},
			want: `container's runAsUser breaks non-root policy (pod: ` + pod + `, container: app)`,
		},
		{
			name: "pod's runAsUser 0 under the pod's runAsNonRoot",
			pod:  &corev1.PodSecurityContext{RunAsNonRoot: &tru, RunAsUser: &root},
			want: `container's runAsUser breaks non-root policy (pod: ` + pod + `, container: app)`,
		},
		{name: "container runAsUser overrides the pod's 0", pod: &corev1.PodSecurityContext{RunAsNonRoot: &tru, RunAsUser: &root}, c: &corev1.SecurityContext{RunAsUser: &user}},
		{
			name: "image runs as root",
			c:    &corev1.SecurityContext{RunAsNonRoot: &tru},
			uid:  &root,
			want: `container has runAsNonRoot and image will run as root (pod: ` + pod + `, container: app)`,
		},
		{name: "image runs as a non-root uid", pod: &corev1.PodSecurityContext{RunAsNonRoot: &tru}, uid: &user},
		{
			name:     "image names its user",
			c:        &corev1.SecurityContext{RunAsNonRoot: &tru},
			username: "nginx",
			want:     `container has runAsNonRoot and image has non-numeric user (nginx), cannot verify user is non-root (pod: ` + pod + `, container: app)`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := basePod()
			p.Spec.SecurityContext = tt.pod
			p.Spec.Containers[0].SecurityContext = tt.c
			got := ""
			if err := verifyRunAsNonRoot(p, &p.Spec.Containers[0], tt.uid, tt.username); err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("verifyRunAsNonRoot = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestImageUser(t *testing.T) {
	tests := []struct {
		name     string
		image    *runtimeapi.Image
		wantUID  *int64
		wantName string
	}{
		{name: "no image: root", wantUID: ptr.To(int64(0))},
		{name: "no user: root", image: &runtimeapi.Image{}, wantUID: ptr.To(int64(0))},
		{name: "uid", image: &runtimeapi.Image{Uid: &runtimeapi.Int64Value{Value: 65534}}, wantUID: ptr.To(int64(65534))},
		{name: "uid 0", image: &runtimeapi.Image{Uid: &runtimeapi.Int64Value{}}, wantUID: ptr.To(int64(0))},
		{name: "username", image: &runtimeapi.Image{Username: "nginx"}, wantName: "nginx"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			uid, name := imageUser(tt.image)
			if diff := cmp.Diff(tt.wantUID, uid); diff != "" || name != tt.wantName {
				t.Errorf("imageUser = (%v, %q), want (%v, %q)", uid, name, tt.wantUID, tt.wantName)
			}
		})
	}
}

// imageStatusFunc is a runtimeapi.ImageServiceClient whose ImageStatus
// answers with a fixed image; other methods are not called.
type imageStatusFunc struct {
	runtimeapi.ImageServiceClient
	image *runtimeapi.Image
	calls int
}

func (f *imageStatusFunc) ImageStatus(context.Context, *runtimeapi.ImageStatusRequest, ...grpc.CallOption) (*runtimeapi.ImageStatusResponse, error) {
	f.calls++
	return &runtimeapi.ImageStatusResponse{Image: f.image}, nil
}

func TestCheckNonRootAsksForTheImageUserOnlyWhenNeeded(t *testing.T) {
	tru, user := true, int64(1000)
	tests := []struct {
		name      string
		sc        *corev1.SecurityContext
		image     *runtimeapi.Image
		wantCalls int
		wantErr   bool
	}{
		{name: "no runAsNonRoot", image: &runtimeapi.Image{}},
		{name: "runAsUser set", sc: &corev1.SecurityContext{RunAsNonRoot: &tru, RunAsUser: &user}, image: &runtimeapi.Image{}},
		{name: "root image", sc: &corev1.SecurityContext{RunAsNonRoot: &tru}, image: &runtimeapi.Image{}, wantCalls: 1, wantErr: true},
		{name: "non-root image", sc: &corev1.SecurityContext{RunAsNonRoot: &tru}, image: &runtimeapi.Image{Uid: &runtimeapi.Int64Value{Value: 7}}, wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			images := &imageStatusFunc{image: tt.image}
			m := &Manager{cfg: Config{Images: images}}
			pod := basePod()
			pod.Spec.Containers[0].SecurityContext = tt.sc
			err := m.checkNonRoot(context.Background(), pod, &pod.Spec.Containers[0], "sha256:abc")
			if (err != nil) != tt.wantErr || images.calls != tt.wantCalls {
				t.Errorf("checkNonRoot = %v with %d ImageStatus calls, want error %v with %d", err, images.calls, tt.wantErr, tt.wantCalls)
			}
		})
	}
}

func TestSyncPodRunAsNonRootRootImage(t *testing.T) {
	e := newEnv(t)
	e.fake.AddImage("busybox:1.36") // the fake's images run as root
	pod := basePod()
	pod.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true)}
	const msg = `container has runAsNonRoot and image will run as root (pod: "web_default(uid-1)", container: app)`
	f := e.sync(pod)["app"]
	if f.Reason != ReasonCreateContainerConfigError || f.Message != msg {
		t.Errorf("failure = %+v", f)
	}
	if evs := e.events.take(); !hasEvent(evs, "Warning Failed Error: "+msg) {
		t.Errorf("events %q lack the Failed event", evs)
	}
	pod.Spec.SecurityContext.RunAsUser = ptr.To[int64](1000)
	if f := e.sync(pod); len(f) != 0 {
		t.Errorf("with runAsUser 1000: failures %+v", f)
	}
	e.running(pod, "app")
}
