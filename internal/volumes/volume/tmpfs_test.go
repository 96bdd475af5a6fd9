package volume

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

func TestTmpfsSize(t *testing.T) {
	mi := func(n int64) int64 { return n << 20 }
	memDir := func(limit string) corev1.Volume {
		v := corev1.Volume{Name: "m", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}}
		if limit != "" {
			v.EmptyDir.SizeLimit = ptr.To(resource.MustParse(limit))
		}
		return v
	}
	noLimit := testPod()
	noLimit.Spec.Containers[0].Resources = corev1.ResourceRequirements{}
	withInit := testPod()
	withInit.Spec.InitContainers = []corev1.Container{
		{Name: "sidecar", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways), Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("16Mi")}}},
		{Name: "init", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")}}},
	}
	alloc := ptr.To(resource.MustParse("1Gi"))
	tests := []struct {
		name      string
		kind      Kind
		pod       *corev1.Pod
		volume    corev1.Volume
		alloc     *resource.Quantity
		wantTmpfs bool
		wantSize  int64
		wantErr   bool
	}{
		{name: "disk emptyDir", kind: KindEmptyDir, pod: testPod(), volume: corev1.Volume{VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		{name: "configMap", kind: KindConfigMap, pod: testPod(), volume: cmVolume("c", nil, false, nil)},
		{name: "memory sizeLimit below pod limit", kind: KindEmptyDir, pod: testPod(), volume: memDir("1Mi"), alloc: alloc, wantTmpfs: true, wantSize: mi(1)},
		{name: "memory sizeLimit above pod limit", kind: KindEmptyDir, pod: testPod(), volume: memDir("100Mi"), alloc: alloc, wantTmpfs: true, wantSize: mi(64)},
		{name: "memory no limits", kind: KindEmptyDir, pod: noLimit, volume: memDir(""), alloc: alloc, wantTmpfs: true, wantSize: mi(1024)},
		{name: "memory nothing known", kind: KindEmptyDir, pod: noLimit, volume: memDir(""), wantTmpfs: true, wantSize: 0},
		{name: "secret bounded by pod", kind: KindSecret, pod: testPod(), volume: secretVolume("s", nil, false), alloc: alloc, wantTmpfs: true, wantSize: mi(64)},
		{name: "init container larger", kind: KindProjected, pod: withInit, volume: kubeAPIAccess(), wantTmpfs: true, wantSize: mi(144)},
		{name: "hugepages (hugetlbfs, not tmpfs)", kind: KindEmptyDir, pod: testPod(), volume: corev1.Volume{VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumHugePages}}}},
		{name: "unknown medium", kind: KindEmptyDir, pod: testPod(), volume: corev1.Volume{VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: "Disk"}}}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpfs, size, err := tmpfsSize(tt.kind, tt.pod, tt.volume, tt.alloc)
			if (err != nil) != tt.wantErr || tmpfs != tt.wantTmpfs || size != tt.wantSize {
				t.Errorf("tmpfsSize() = %v, %d, %v; want %v, %d, err %v", tmpfs, size, err, tt.wantTmpfs, tt.wantSize, tt.wantErr)
			}
		})
	}
}
