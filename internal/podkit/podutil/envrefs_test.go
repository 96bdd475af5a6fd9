package podutil

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
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
	cms, secrets := EnvReferences(c.Env, c.EnvFrom)
	if diff := cmp.Diff([]string{"cm-a", "cm-b"}, cms); diff != "" {
		t.Errorf("configMaps (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"s-a", "s-b"}, secrets); diff != "" {
		t.Errorf("secrets (-want +got):\n%s", diff)
	}
}
