package kuberuntime

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// basePod is the pod most tests start from. containerconfig's tests have
// the same one.
func basePod() *corev1.Pod {
	grace := int64(30)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web", Namespace: "default", UID: "uid-1",
			Labels:      map[string]string{"app": "web"},
			Annotations: map[string]string{"note": "x"},
		},
		Spec: corev1.PodSpec{
			DNSPolicy:                     corev1.DNSClusterFirst,
			RestartPolicy:                 corev1.RestartPolicyAlways,
			TerminationGracePeriodSeconds: &grace,
			Containers: []corev1.Container{{
				Name: "app", Image: "busybox:1.36", ImagePullPolicy: corev1.PullIfNotPresent,
				TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile,
			}},
		},
	}
}

// kv builds a CRI environment from name, value pairs.
func kv(pairs ...string) []*runtimeapi.KeyValue {
	var out []*runtimeapi.KeyValue
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, &runtimeapi.KeyValue{Key: pairs[i], Value: []byte(pairs[i+1])})
	}
	return out
}
