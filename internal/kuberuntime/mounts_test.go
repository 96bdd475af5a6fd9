package kuberuntime

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"
)

func TestMountSpecs(t *testing.T) {
	vols := map[string]string{"data": "/v/data", "conf": "/v/conf"}
	vars := map[string]string{"POD_NAME": "web-1"}
	priv := &corev1.SecurityContext{Privileged: ptr.To(true)}
	tests := []struct {
		name    string
		mounts  []corev1.VolumeMount
		sc      *corev1.SecurityContext
		want    []mountSpec
		wantErr string
	}{
		{name: "whole volume", mounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
			want: []mountSpec{{VolumeDir: "/v/data", ContainerPath: "/data", Propagation: runtimeapi.MountPropagation_PROPAGATION_PRIVATE}}},
		{name: "read-only subPath", mounts: []corev1.VolumeMount{{Name: "conf", MountPath: "/etc/app.conf", SubPath: "app.conf", ReadOnly: true}},
			want: []mountSpec{{VolumeDir: "/v/conf", SubPath: "app.conf", ContainerPath: "/etc/app.conf", ReadOnly: true, Propagation: runtimeapi.MountPropagation_PROPAGATION_PRIVATE}}},
		{name: "subPathExpr expands the environment", mounts: []corev1.VolumeMount{{Name: "data", MountPath: "/out", SubPathExpr: "logs/$(POD_NAME)"}},
			want: []mountSpec{{VolumeDir: "/v/data", SubPath: "logs/web-1", ContainerPath: "/out", Propagation: runtimeapi.MountPropagation_PROPAGATION_PRIVATE}}},
		{name: "host to container", mounts: []corev1.VolumeMount{{Name: "data", MountPath: "/d", MountPropagation: ptr.To(corev1.MountPropagationHostToContainer)}},
			want: []mountSpec{{VolumeDir: "/v/data", ContainerPath: "/d", Propagation: runtimeapi.MountPropagation_PROPAGATION_HOST_TO_CONTAINER}}},
		{name: "bidirectional needs privileged", mounts: []corev1.VolumeMount{{Name: "data", MountPath: "/d", MountPropagation: ptr.To(corev1.MountPropagationBidirectional)}},
			wantErr: "only to privileged containers"},
		{name: "bidirectional privileged", sc: priv, mounts: []corev1.VolumeMount{{Name: "data", MountPath: "/d", MountPropagation: ptr.To(corev1.MountPropagationBidirectional)}},
			want: []mountSpec{{VolumeDir: "/v/data", ContainerPath: "/d", Propagation: runtimeapi.MountPropagation_PROPAGATION_BIDIRECTIONAL}}},
		{name: "volume not set up", mounts: []corev1.VolumeMount{{Name: "missing", MountPath: "/m"}}, wantErr: `volume "missing"`},
		{name: "dot-dot in subPathExpr", mounts: []corev1.VolumeMount{{Name: "data", MountPath: "/m", SubPathExpr: "../$(POD_NAME)"}}, wantErr: "without '..'"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &corev1.Container{Name: "app", VolumeMounts: tc.mounts, SecurityContext: tc.sc}
			got, err := mountSpecs(&corev1.Pod{}, c, vols, vars)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestSafeSubPath(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "a", "b"), 0o755))
	must(os.Symlink(outside, filepath.Join(root, "escape")))
	must(os.Symlink("a/b", filepath.Join(root, "inside")))
	must(os.Symlink("/etc/passwd", filepath.Join(root, "abs")))

	for _, tc := range []struct {
		sub     string
		want    string
		wantErr string
	}{
		{sub: "a/b", want: filepath.Join(root, "a", "b")},
		{sub: "inside", want: filepath.Join(root, "a", "b")},
		{sub: "new/dir", want: filepath.Join(root, "new", "dir")},
		{sub: "escape", wantErr: "escapes its volume"},
		{sub: "escape/created", wantErr: "escapes its volume"},
		{sub: "abs", wantErr: "escapes its volume"},
	} {
		t.Run(tc.sub, func(t *testing.T) {
			realRoot, _ := filepath.EvalSymlinks(root)
			got, err := safeSubPath(root, tc.sub)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("safeSubPath(%q) = %q, %v; want error %q", tc.sub, got, err, tc.wantErr)
				}
				return
			}
			want := strings.Replace(tc.want, root, realRoot, 1)
			if err != nil || got != want {
				t.Fatalf("safeSubPath(%q) = %q, %v; want %q", tc.sub, got, err, want)
			}
			if fi, err := os.Stat(got); err != nil || !fi.IsDir() {
				t.Errorf("%q not a directory: %v", got, err)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(outside, "created")); !os.IsNotExist(err) {
		t.Errorf("a directory was created outside the volume: %v", err)
	}
}
