package objectcache

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func cmKeyRef(name string) *corev1.EnvVarSource {
	return &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: "k"}}
}

func secretKeyRef(name string) *corev1.EnvVarSource {
	return &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: "k"}}
}

func ref(name string) corev1.LocalObjectReference { return corev1.LocalObjectReference{Name: name} }

// refPod references configMaps and secrets from every place a pod can.
func refPod() *corev1.Pod {
	return &corev1.Pod{Spec: corev1.PodSpec{
		ImagePullSecrets: []corev1.LocalObjectReference{ref("pull"), ref("")},
		InitContainers: []corev1.Container{{
			Env: []corev1.EnvVar{{Name: "A", ValueFrom: cmKeyRef("init-cm")}, {Name: "B", ValueFrom: secretKeyRef("init-sec")}},
		}},
		Containers: []corev1.Container{{
			EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: ref("from-cm")}},
				{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: ref("from-sec")}}},
			Env: []corev1.EnvVar{{Name: "C", Value: "plain"}, {Name: "D", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
				{Name: "E", ValueFrom: cmKeyRef("shared")}, {Name: "F", ValueFrom: secretKeyRef("shared")}},
		}},
		EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
			Env: []corev1.EnvVar{{Name: "G", ValueFrom: cmKeyRef("eph-cm")}, {Name: "H", ValueFrom: secretKeyRef("eph-sec")}},
		}}},
		Volumes: []corev1.Volume{
			{Name: "cm", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: ref("vol-cm")}}},
			{Name: "sec", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "vol-sec"}}},
			{Name: "proj", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: ref("proj-cm")}},
				{Secret: &corev1.SecretProjection{LocalObjectReference: ref("proj-sec")}},
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}},
			}}}},
			{Name: "csi", VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "d", NodePublishSecretRef: &corev1.LocalObjectReference{Name: "csi-sec"}}}},
			{Name: "empty", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		},
	}}
}

func TestNames(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		mutate               func(*corev1.Pod)
		wantCMs, wantSecrets []string
	}{{
		name:        "every place, sorted, no empty names, unsupported volume types left out",
		mutate:      func(*corev1.Pod) {},
		wantCMs:     []string{"eph-cm", "from-cm", "init-cm", "proj-cm", "shared", "vol-cm"},
		wantSecrets: []string{"eph-sec", "from-sec", "init-sec", "proj-sec", "pull", "shared", "vol-sec"},
	}, {
		name: "duplicates once",
		mutate: func(p *corev1.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, p.Spec.Containers[0])
			p.Spec.ImagePullSecrets = append(p.Spec.ImagePullSecrets, ref("vol-sec"))
		},
		wantCMs:     []string{"eph-cm", "from-cm", "init-cm", "proj-cm", "shared", "vol-cm"},
		wantSecrets: []string{"eph-sec", "from-sec", "init-sec", "proj-sec", "pull", "shared", "vol-sec"},
	}, {
		name:   "nothing referenced",
		mutate: func(p *corev1.Pod) { p.Spec = corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}} },
	}, {
		name: "volumes only",
		mutate: func(p *corev1.Pod) {
			p.Spec.ImagePullSecrets, p.Spec.InitContainers, p.Spec.Containers, p.Spec.EphemeralContainers = nil, nil, nil, nil
		},
		wantCMs:     []string{"proj-cm", "vol-cm"},
		wantSecrets: []string{"proj-sec", "vol-sec"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			pod := refPod()
			tc.mutate(pod)
			if diff := cmp.Diff(tc.wantCMs, ConfigMapNames(pod)); diff != "" {
				t.Errorf("ConfigMapNames (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantSecrets, SecretNames(pod)); diff != "" {
				t.Errorf("SecretNames (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDiff(t *testing.T) {
	for _, tc := range []struct {
		name                string
		prev, next          []string
		wantAdded, wantGone []string
	}{
		{name: "first registration", next: []string{"a", "b"}, wantAdded: []string{"a", "b"}},
		{name: "unregistration", prev: []string{"a", "b"}, wantGone: []string{"a", "b"}},
		{name: "same", prev: []string{"a", "b"}, next: []string{"a", "b"}},
		{name: "one swapped", prev: []string{"a", "b"}, next: []string{"b", "c"}, wantAdded: []string{"c"}, wantGone: []string{"a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			added, gone := diff(tc.prev, tc.next)
			if d := cmp.Diff(tc.wantAdded, added); d != "" {
				t.Errorf("added (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.wantGone, gone); d != "" {
				t.Errorf("removed (-want +got):\n%s", d)
			}
		})
	}
}
