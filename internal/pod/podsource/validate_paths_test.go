package podsource

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestValidateVolumePaths(t *testing.T) {
	volume := func(src corev1.VolumeSource) func(*corev1.Pod) {
		return func(p *corev1.Pod) { p.Spec.Volumes[0].VolumeSource = src }
	}
	items := func(paths ...string) []corev1.KeyToPath {
		var out []corev1.KeyToPath
		for _, p := range paths {
			out = append(out, corev1.KeyToPath{Key: "k", Path: p})
		}
		return out
	}
	mount := func(subPath, subPathExpr string) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Spec.Containers[0].VolumeMounts[0].SubPath = subPath
			p.Spec.Containers[0].VolumeMounts[0].SubPathExpr = subPathExpr
		}
	}
	fieldRef := &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}
	tests := []struct {
		name   string
		mutate func(*corev1.Pod)
		// want lists "<type> <field>" of each error.
		want []string
	}{
		{name: "plain items", mutate: volume(corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{Items: items("a", "b/c", "./d", "e..f")}})},
		{name: "configMap item escapes", mutate: volume(corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{Items: items("../../etc/passwd")}}),
			want: []string{"FieldValueInvalid spec.volumes[0].configMap.items[0].path"}},
		{name: "secret item absolute", mutate: volume(corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{Items: items("/etc/shadow")}}),
			want: []string{"FieldValueInvalid spec.volumes[0].secret.items[0].path"}},
		{name: "item starts with ..", mutate: volume(corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{Items: items("..data")}}),
			want: []string{"FieldValueInvalid spec.volumes[0].secret.items[0].path"}},
		{name: "item with .. inside", mutate: volume(corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{Items: items("a/../../b")}}),
			want: []string{"FieldValueInvalid spec.volumes[0].configMap.items[0].path"}},
		{name: "item without path or key", mutate: volume(corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{Items: []corev1.KeyToPath{{}}}}),
			want: []string{"FieldValueRequired spec.volumes[0].configMap.items[0].key", "FieldValueRequired spec.volumes[0].configMap.items[0].path"}},
		{name: "mode out of range", mutate: volume(corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{DefaultMode: ptrTo(int32(0o4755)),
			Items: []corev1.KeyToPath{{Key: "k", Path: "p", Mode: ptrTo(int32(-1))}}}}),
			want: []string{"FieldValueInvalid spec.volumes[0].secret.defaultMode", "FieldValueInvalid spec.volumes[0].secret.items[0].mode"}},
		{name: "downwardAPI file escapes", mutate: volume(corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{
			Items: []corev1.DownwardAPIVolumeFile{{Path: "..", FieldRef: fieldRef}}}}),
			// Two errors, as upstream: a ".." element, and starting with "..".
			want: []string{"FieldValueInvalid spec.volumes[0].downwardAPI.items[0].path", "FieldValueInvalid spec.volumes[0].downwardAPI.items[0].path"}},
		{name: "projected sources", mutate: volume(corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{ConfigMap: &corev1.ConfigMapProjection{Items: items("ok", "/abs")}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "x/../../y", FieldRef: fieldRef}}}},
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "../token"}},
		}}}), want: []string{
			"FieldValueInvalid spec.volumes[0].projected.sources[0].configMap.items[1].path",
			"FieldValueInvalid spec.volumes[0].projected.sources[1].downwardAPI.items[0].path",
			"FieldValueInvalid spec.volumes[0].projected.sources[2].serviceAccountToken.path",
		}},
		{name: "hostPath with ..", mutate: volume(corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var/log/../../etc"}}),
			want: []string{"FieldValueInvalid spec.volumes[0].hostPath.path"}},
		{name: "subPath fine", mutate: mount("a/b", "")},
		{name: "subPath escapes", mutate: mount("../x", ""), want: []string{"FieldValueInvalid spec.containers[0].volumeMounts[0].subPath"}},
		{name: "subPath absolute", mutate: mount("/etc", ""), want: []string{"FieldValueInvalid spec.containers[0].volumeMounts[0].subPath"}},
		{name: "subPathExpr escapes", mutate: mount("", "$(POD_NAME)/.."), want: []string{"FieldValueInvalid spec.containers[0].volumeMounts[0].subPathExpr"}},
		{name: "subPath and subPathExpr", mutate: mount("a", "b"), want: []string{"FieldValueInvalid spec.containers[0].volumeMounts[0].subPathExpr"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := validPod()
			tt.mutate(pod)
			var got []string
			for _, e := range ValidatePod(pod) {
				got = append(got, string(e.Type)+" "+e.Field)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s\nall: %v", diff, ValidatePod(pod))
			}
		})
	}
}
