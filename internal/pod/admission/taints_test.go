package admission

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestUntoleratedNoExecute(t *testing.T) {
	noExec := corev1.Taint{Key: "dedicated", Value: "db", Effect: corev1.TaintEffectNoExecute}
	tests := []struct {
		name        string
		taints      []corev1.Taint
		tolerations []corev1.Toleration
		want        bool
	}{
		{name: "no taints", want: false},
		{name: "NoExecute untolerated", taints: []corev1.Taint{noExec}, want: true},
		{name: "NoSchedule ignored", taints: []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}, want: false},
		{name: "PreferNoSchedule ignored", taints: []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectPreferNoSchedule}}, want: false},
		{name: "Equal with the value", taints: []corev1.Taint{noExec},
			tolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "db", Effect: corev1.TaintEffectNoExecute}}, want: false},
		{name: "empty operator means Equal", taints: []corev1.Taint{noExec},
			tolerations: []corev1.Toleration{{Key: "dedicated", Value: "db"}}, want: false},
		{name: "Equal with another value", taints: []corev1.Taint{noExec},
			tolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "web"}}, want: true},
		{name: "Exists matches any value", taints: []corev1.Taint{noExec},
			tolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}}, want: false},
		{name: "Exists of another key", taints: []corev1.Taint{noExec},
			tolerations: []corev1.Toleration{{Key: "other", Operator: corev1.TolerationOpExists}}, want: true},
		{name: "empty key with Exists matches every taint", taints: []corev1.Taint{noExec, {Key: "x", Effect: corev1.TaintEffectNoExecute}},
			tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}, want: false},
		// The API rejects an empty key without Exists; the matching itself
		// then compares only the values, as upstream's ToleratesTaint does.
		{name: "empty key with Equal compares the value", taints: []corev1.Taint{{Key: "x", Value: "v", Effect: corev1.TaintEffectNoExecute}},
			tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpEqual, Value: "v"}}, want: false},
		{name: "empty key with Equal and another value", taints: []corev1.Taint{{Key: "x", Value: "v", Effect: corev1.TaintEffectNoExecute}},
			tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpEqual, Value: "w"}}, want: true},
		{name: "effect differs", taints: []corev1.Taint{noExec},
			tolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}, want: true},
		{name: "every taint must be tolerated", taints: []corev1.Taint{noExec, {Key: "x", Effect: corev1.TaintEffectNoExecute}},
			tolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}}, want: true},
		{name: "Gt", taints: []corev1.Taint{{Key: "level", Value: "5", Effect: corev1.TaintEffectNoExecute}},
			tolerations: []corev1.Toleration{{Key: "level", Operator: corev1.TolerationOpGt, Value: "3"}}, want: false},
		{name: "Lt not satisfied", taints: []corev1.Taint{{Key: "level", Value: "5", Effect: corev1.TaintEffectNoExecute}},
			tolerations: []corev1.Toleration{{Key: "level", Operator: corev1.TolerationOpLt, Value: "3"}}, want: true},
		{name: "Gt of a non-integer", taints: []corev1.Taint{{Key: "level", Value: "high", Effect: corev1.TaintEffectNoExecute}},
			tolerations: []corev1.Toleration{{Key: "level", Operator: corev1.TolerationOpGt, Value: "3"}}, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			node := testNode()
			node.Spec.Taints = tt.taints
			pod := testPod("p")
			pod.Spec.Tolerations = tt.tolerations
			if got := untoleratedNoExecute(pod, node); got != tt.want {
				t.Errorf("untoleratedNoExecute = %v, want %v", got, tt.want)
			}
		})
	}
}
