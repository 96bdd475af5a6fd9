package volume

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestNestedMountpoints(t *testing.T) {
	mounts := func(pairs ...string) []corev1.VolumeMount {
		var out []corev1.VolumeMount
		for i := 0; i < len(pairs); i += 2 {
			out = append(out, corev1.VolumeMount{Name: pairs[i], MountPath: pairs[i+1]})
		}
		return out
	}
	tests := []struct {
		name    string
		spec    corev1.PodSpec
		want    []string
		wantErr string
	}{
		{name: "none", spec: corev1.PodSpec{Containers: []corev1.Container{{VolumeMounts: mounts("cfg", "/etc/app", "data", "/data")}}}},
		{name: "first level only", spec: corev1.PodSpec{Containers: []corev1.Container{{VolumeMounts: mounts(
			"cfg", "/etc/app", "data", "/etc/app/data", "deep", "/etc/app/data/deep", "sec", "/etc/app/tls/certs")}}},
			want: []string{"data", "tls/certs"}},
		{name: "prefix is not nesting", spec: corev1.PodSpec{Containers: []corev1.Container{{VolumeMounts: mounts(
			"cfg", "/etc/app", "a", "/etc/app-other", "b", "/etc/application", "c", "/etc/app/x")}}},
			want: []string{"x"}},
		{name: "trailing slash", spec: corev1.PodSpec{Containers: []corev1.Container{{VolumeMounts: mounts("cfg", "/etc/app/", "data", "/etc/app/data/")}}},
			want: []string{"data"}},
		{name: "every container kind, once each", spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{VolumeMounts: mounts("cfg", "/etc/app", "a", "/etc/app/init")}},
			Containers:     []corev1.Container{{VolumeMounts: mounts("cfg", "/cfg", "a", "/cfg/init", "b", "/cfg/main")}},
			EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
				VolumeMounts: mounts("cfg", "/c", "d", "/c/debug")}}},
		}, want: []string{"init", "main", "debug"}},
		{name: "another container's mounts do not count", spec: corev1.PodSpec{Containers: []corev1.Container{
			{VolumeMounts: mounts("cfg", "/etc/app")}, {VolumeMounts: mounts("data", "/etc/app/data")}}}},
		{name: "a reserved name", spec: corev1.PodSpec{Containers: []corev1.Container{{VolumeMounts: mounts("cfg", "/etc/app", "data", "/etc/app/..data")}}},
			wantErr: "must not start with '..'"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := nestedMountpoints(&corev1.Pod{Spec: tc.spec}, "cfg")
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

// TestSetUpMakesNestedMountpoints: a configMap mounted at /etc/app with
// an emptyDir at /etc/app/data gets the directory data, so that the
// runtime can mount there although the configMap is read-only; the
// content stays readable and a refresh keeps the directory.
func TestSetUpMakesNestedMountpoints(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, clusterObjects()...)
	pod := testPod()
	pod.Spec.Volumes = []corev1.Volume{
		{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}},
		{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}
	pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "cfg", MountPath: "/etc/app"}, {Name: "data", MountPath: "/etc/app/data"}}
	paths, err := e.m.SetUp(ctx, pod)
	if err != nil {
		t.Fatal(err)
	}
	e.m.refresh(ctx, false)
	if info, err := os.Lstat(filepath.Join(paths["cfg"], "data")); err != nil || !info.IsDir() {
		t.Errorf("nested mount point: %v, %v; want a directory", info, err)
	}
	if got := readFile(t, filepath.Join(paths["cfg"], "k")); got != "v1" {
		t.Errorf("configMap k = %q, want v1", got)
	}
}
