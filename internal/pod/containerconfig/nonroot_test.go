package containerconfig

import (
	"testing"

	"github.com/google/go-cmp/cmp"
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
			if err := VerifyRunAsNonRoot(p, &p.Spec.Containers[0], tt.uid, tt.username); err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("VerifyRunAsNonRoot = %q, want %q", got, tt.want)
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
			uid, name := ImageUser(tt.image)
			if diff := cmp.Diff(tt.wantUID, uid); diff != "" || name != tt.wantName {
				t.Errorf("imageUser = (%v, %q), want (%v, %q)", uid, name, tt.wantUID, tt.wantName)
			}
		})
	}
}
