package soak

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// volumeFiles are the files a crash-volumes pod's container checks before
// it starts to sleep: one a volume of each kind it mounts must hold.
var volumeFiles = []string{"/v/cm/key", "/v/secret/key", "/v/proj/token", "/v/proj/key", "/v/proj/labels", "/v/dapi/name"}

// crashVolumes: the crash scenario on pods that mount a volume of each
// kind a kubelet sets up itself (a ConfigMap, a Secret, a projected volume
// with a service account token, a ConfigMap and the downward API, a
// downward API volume, a memory-backed emptyDir with a size limit and a
// disk one): the kubelet is killed at a random point of the burst, while it
// sets those volumes up. Every pod ends Running with its files in place
// (its container exits, a restart, when one is missing or empty, or when it
// cannot write to an emptyDir), one sandbox and no replaced container; then
// killed during their deletion, nothing is left: no mount (the memory
// emptyDir, the Secret's and the projected volume's tmpfs), no pod
// directory.
func crashVolumes(ctx context.Context, e *env) error {
	data := map[string]string{"key": "value of " + e.name}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: e.name, Namespace: namespace}, Data: data}
	if _, err := e.client.CoreV1().ConfigMaps(namespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create the ConfigMap: %w", err)
	}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: e.name, Namespace: namespace}, StringData: data}
	if _, err := e.client.CoreV1().Secrets(namespace).Create(ctx, sec, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create the Secret: %w", err)
	}
	defer func() {
		_ = e.client.CoreV1().ConfigMaps(namespace).Delete(context.WithoutCancel(ctx), e.name, metav1.DeleteOptions{})
		_ = e.client.CoreV1().Secrets(namespace).Delete(context.WithoutCancel(ctx), e.name, metav1.DeleteOptions{})
	}()
	return crashRounds(ctx, e, func(run string, i int, nodeName string) *corev1.Pod {
		return volumePod(run, i, nodeName, e.name)
	})
}

// volumePod is soakPod with a volume of each kind, from the ConfigMap and
// the Secret named source; its container checks volumeFiles and writes to
// both emptyDirs before it sleeps.
func volumePod(run string, i int, nodeName, source string) *corev1.Pod {
	p := soakPod(run, i, nodeName)
	ref := corev1.LocalObjectReference{Name: source}
	labels := corev1.DownwardAPIVolumeFile{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}}
	p.Spec.Volumes = []corev1.Volume{
		{Name: "cm", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: ref}}},
		{Name: "secret", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: source}}},
		{Name: "proj", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](3600)}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: ref}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{labels}}},
		}}}},
		{Name: "dapi", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
			{Path: "name", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}},
		}}}},
		{Name: "mem", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: ptr.To(resource.MustParse("8Mi"))}}},
		{Name: "disk", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}
	c := &p.Spec.Containers[0]
	for _, v := range p.Spec.Volumes {
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: v.Name, MountPath: "/v/" + v.Name})
	}
	check := ""
	for _, f := range volumeFiles {
		check += fmt.Sprintf(`[ -s %[1]s ] || { echo "missing %[1]s" >&2; exit 3; }; `, f)
	}
	c.TerminationMessagePolicy = corev1.TerminationMessageFallbackToLogsOnError
	c.Command = []string{"sh", "-c", check + "echo ok > /v/mem/f && echo ok > /v/disk/f || exit 4; trap 'exit 0' TERM; sleep 3600 & wait"}
	return p
}
