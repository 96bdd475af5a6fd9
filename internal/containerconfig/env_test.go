package containerconfig

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestEnvReferences(t *testing.T) {
	c := &corev1.Container{
		EnvFrom: []corev1.EnvFromSource{
			{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm-a"}}},
			{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "s-a"}}},
		},
		Env: []corev1.EnvVar{
			{Name: "X", Value: "literal"},
			{Name: "Y", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "cm-b"}, Key: "k"}}},
			{Name: "Z", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "cm-a"}, Key: "k"}}},
			{Name: "W", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "s-b"}, Key: "k"}}},
			{Name: "F", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		},
	}
	cms, secrets := EnvReferences(c)
	if diff := cmp.Diff([]string{"cm-a", "cm-b"}, cms); diff != "" {
		t.Errorf("configMaps (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"s-a", "s-b"}, secrets); diff != "" {
		t.Errorf("secrets (-want +got):\n%s", diff)
	}
}

// TestEnvFetchFailures: a fetch failure other than not found is the error
// of the container that needs the object; not found follows optional.
func TestEnvFetchFailures(t *testing.T) {
	optional := true
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"}}
	ref := func(name string, opt *bool) corev1.EnvVar {
		return corev1.EnvVar{Name: "V", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: "k", Optional: opt}}}
	}
	tests := []struct {
		name    string
		env     corev1.EnvVar
		in      EnvInput
		wantErr string
	}{
		{name: "fetch failed", env: ref("cm", nil),
			in:      EnvInput{ConfigMaps: map[string]*corev1.ConfigMap{}, FetchErrs: map[string]error{"configmap/cm": errors.New("apiserver down")}},
			wantErr: "apiserver down"},
		{name: "not found, required", env: ref("cm", nil),
			in:      EnvInput{ConfigMaps: map[string]*corev1.ConfigMap{"cm": nil}},
			wantErr: `configmap "cm" not found`},
		{name: "not found, optional", env: ref("cm", &optional),
			in: EnvInput{ConfigMaps: map[string]*corev1.ConfigMap{"cm": nil}}},
		{name: "standalone", env: ref("cm", &optional), in: EnvInput{Standalone: true},
			wantErr: "couldn't get configMap shop/cm: configMap references need an API server"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			in.Pod, in.Container, in.ServicesSynced = pod, &corev1.Container{Env: []corev1.EnvVar{tc.env}}, true
			_, err := Env(in)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.wantErr {
				t.Errorf("Env error = %q, want %q", got, tc.wantErr)
			}
		})
	}
}
