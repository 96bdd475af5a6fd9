package admission

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func expr(key string, op corev1.NodeSelectorOperator, values ...string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: key, Operator: op, Values: values}
}

func TestNodeAffinityMatches(t *testing.T) {
	// The node (testNode) is named node-a and labelled zone=z1, cores=8,
	// kubernetes.io/hostname=node-a and its OS.
	exprs := func(reqs ...corev1.NodeSelectorRequirement) corev1.NodeSelectorTerm {
		return corev1.NodeSelectorTerm{MatchExpressions: reqs}
	}
	fields := func(reqs ...corev1.NodeSelectorRequirement) corev1.NodeSelectorTerm {
		return corev1.NodeSelectorTerm{MatchFields: reqs}
	}
	tests := []struct {
		name         string
		nodeSelector map[string]string
		affinity     *corev1.Affinity
		want         bool
	}{
		{name: "nothing required", want: true},
		{name: "selector matches", nodeSelector: map[string]string{"zone": "z1"}, want: true},
		{name: "selector value differs", nodeSelector: map[string]string{"zone": "z2"}, want: false},
		{name: "selector label missing", nodeSelector: map[string]string{"gpu": ""}, want: false},
		{name: "affinity without required part", affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}}, want: true},
		{name: "no terms match nothing", affinity: affinity(), want: false},
		{name: "an empty term matches nothing", affinity: affinity(corev1.NodeSelectorTerm{}), want: false},
		{name: "In", affinity: affinity(exprs(expr("zone", corev1.NodeSelectorOpIn, "z0", "z1"))), want: true},
		{name: "In without the value", affinity: affinity(exprs(expr("zone", corev1.NodeSelectorOpIn, "z0"))), want: false},
		{name: "NotIn", affinity: affinity(exprs(expr("zone", corev1.NodeSelectorOpNotIn, "z0"))), want: true},
		{name: "NotIn with the value", affinity: affinity(exprs(expr("zone", corev1.NodeSelectorOpNotIn, "z1"))), want: false},
		{name: "NotIn of a missing label", affinity: affinity(exprs(expr("gpu", corev1.NodeSelectorOpNotIn, "x"))), want: true},
		{name: "Exists", affinity: affinity(exprs(expr("zone", corev1.NodeSelectorOpExists))), want: true},
		{name: "Exists of a missing label", affinity: affinity(exprs(expr("gpu", corev1.NodeSelectorOpExists))), want: false},
		{name: "DoesNotExist", affinity: affinity(exprs(expr("gpu", corev1.NodeSelectorOpDoesNotExist))), want: true},
		{name: "DoesNotExist of a label", affinity: affinity(exprs(expr("zone", corev1.NodeSelectorOpDoesNotExist))), want: false},
		{name: "Gt", affinity: affinity(exprs(expr("cores", corev1.NodeSelectorOpGt, "4"))), want: true},
		{name: "Gt equal", affinity: affinity(exprs(expr("cores", corev1.NodeSelectorOpGt, "8"))), want: false},
		{name: "Lt", affinity: affinity(exprs(expr("cores", corev1.NodeSelectorOpLt, "16"))), want: true},
		{name: "Lt smaller", affinity: affinity(exprs(expr("cores", corev1.NodeSelectorOpLt, "2"))), want: false},
		{name: "Gt of a non-integer label", affinity: affinity(exprs(expr("zone", corev1.NodeSelectorOpGt, "1"))), want: false},
		{name: "Gt with two values is invalid", affinity: affinity(exprs(expr("cores", corev1.NodeSelectorOpGt, "1", "2"))), want: false},
		{name: "In without values is invalid", affinity: affinity(exprs(expr("zone", corev1.NodeSelectorOpIn))), want: false},
		{name: "unknown operator is invalid", affinity: affinity(exprs(expr("zone", "Near", "z1"))), want: false},
		{name: "expressions of a term all hold", affinity: affinity(exprs(
			expr("zone", corev1.NodeSelectorOpIn, "z1"), expr("cores", corev1.NodeSelectorOpGt, "16"))), want: false},
		{name: "any term may hold", affinity: affinity(
			exprs(expr("zone", corev1.NodeSelectorOpIn, "z2")),
			exprs(expr("cores", corev1.NodeSelectorOpGt, "4"))), want: true},
		{name: "an invalid term does not spoil a valid one", affinity: affinity(
			exprs(expr("zone", corev1.NodeSelectorOpGt, "x", "y")),
			exprs(expr("zone", corev1.NodeSelectorOpIn, "z1"))), want: true},
		{name: "field In", affinity: affinity(fields(expr("metadata.name", corev1.NodeSelectorOpIn, "node-a"))), want: true},
		{name: "field In another node", affinity: affinity(fields(expr("metadata.name", corev1.NodeSelectorOpIn, "node-b"))), want: false},
		{name: "field NotIn", affinity: affinity(fields(expr("metadata.name", corev1.NodeSelectorOpNotIn, "node-b"))), want: true},
		{name: "field NotIn this node", affinity: affinity(fields(expr("metadata.name", corev1.NodeSelectorOpNotIn, "node-a"))), want: false},
		{name: "field In with two values is invalid", affinity: affinity(fields(expr("metadata.name", corev1.NodeSelectorOpIn, "node-a", "node-b"))), want: false},
		{name: "field Exists is invalid", affinity: affinity(fields(expr("metadata.name", corev1.NodeSelectorOpExists))), want: false},
		{name: "fields and expressions of a term both hold", affinity: affinity(corev1.NodeSelectorTerm{
			MatchExpressions: []corev1.NodeSelectorRequirement{expr("zone", corev1.NodeSelectorOpIn, "z1")},
			MatchFields:      []corev1.NodeSelectorRequirement{expr("metadata.name", corev1.NodeSelectorOpIn, "node-b")},
		}), want: false},
		{name: "selector and affinity both hold", nodeSelector: map[string]string{"zone": "z2"},
			affinity: affinity(exprs(expr("zone", corev1.NodeSelectorOpExists))), want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := testPod("p")
			pod.Spec.NodeSelector = tt.nodeSelector
			pod.Spec.Affinity = tt.affinity
			if got := nodeAffinityMatches(pod, testNode()); got != tt.want {
				t.Errorf("nodeAffinityMatches = %v, want %v", got, tt.want)
			}
		})
	}
}
