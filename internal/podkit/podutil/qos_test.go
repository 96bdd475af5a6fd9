package podutil

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func res(pairs ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(pairs); i += 2 {
		l[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return l
}

func TestQOSClass(t *testing.T) {
	type rr = corev1.ResourceRequirements
	tests := []struct {
		name       string
		containers []rr
		init       []rr
		pod        *rr
		want       corev1.PodQOSClass
	}{
		{"no resources", []rr{{}}, nil, nil, corev1.PodQOSBestEffort},
		{"only non-qos resources", []rr{{Requests: res("ephemeral-storage", "1Gi"), Limits: res("nvidia.com/gpu", "1")}}, nil, nil, corev1.PodQOSBestEffort},
		{"zero quantities", []rr{{Requests: res("cpu", "0"), Limits: res("memory", "0")}}, nil, nil, corev1.PodQOSBestEffort},
		{"limits equal requests", []rr{{Requests: res("cpu", "1", "memory", "1Gi"), Limits: res("cpu", "1", "memory", "1Gi")}}, nil, nil, corev1.PodQOSGuaranteed},
		{"limits only (requests defaulted elsewhere)", []rr{{Limits: res("cpu", "1", "memory", "1Gi")}}, nil, nil, corev1.PodQOSBurstable},
		{"equal in different units", []rr{{Requests: res("cpu", "1000m", "memory", "1024Mi"), Limits: res("cpu", "1", "memory", "1Gi")}}, nil, nil, corev1.PodQOSGuaranteed},
		{"requests below limits", []rr{{Requests: res("cpu", "500m", "memory", "1Gi"), Limits: res("cpu", "1", "memory", "1Gi")}}, nil, nil, corev1.PodQOSBurstable},
		{"cpu limit missing", []rr{{Requests: res("memory", "1Gi"), Limits: res("memory", "1Gi")}}, nil, nil, corev1.PodQOSBurstable},
		{"requests only", []rr{{Requests: res("cpu", "100m")}}, nil, nil, corev1.PodQOSBurstable},
		{"one guaranteed, one best effort", []rr{{Requests: res("cpu", "1", "memory", "1Gi"), Limits: res("cpu", "1", "memory", "1Gi")}, {}}, nil, nil, corev1.PodQOSBurstable},
		{"init container counts", []rr{{Requests: res("cpu", "1", "memory", "1Gi"), Limits: res("cpu", "1", "memory", "1Gi")}},
			[]rr{{Requests: res("cpu", "1", "memory", "1Gi"), Limits: res("cpu", "1", "memory", "1Gi")}}, nil, corev1.PodQOSGuaranteed},
		{"init container best effort", []rr{{Requests: res("cpu", "1", "memory", "1Gi"), Limits: res("cpu", "1", "memory", "1Gi")}},
			[]rr{{}}, nil, corev1.PodQOSBurstable},
		{"pod-level resources decide", []rr{{}}, nil, &rr{Requests: res("cpu", "1", "memory", "1Gi"), Limits: res("cpu", "1", "memory", "1Gi")}, corev1.PodQOSGuaranteed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{}
			for i, r := range tc.containers {
				pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: string(rune('a' + i)), Resources: r})
			}
			for i, r := range tc.init {
				pod.Spec.InitContainers = append(pod.Spec.InitContainers, corev1.Container{Name: string(rune('i' + i)), Resources: r})
			}
			pod.Spec.Resources = tc.pod
			if got := QOSClass(pod); got != tc.want {
				t.Errorf("QOSClass() = %s, want %s", got, tc.want)
			}
		})
	}
}
