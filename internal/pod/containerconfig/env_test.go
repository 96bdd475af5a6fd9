package containerconfig

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

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
