package admission

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// nodeAffinityMatches reports whether node satisfies the pod's nodeSelector
// and its required node affinity, as upstream's
// GetRequiredNodeAffinity(pod).Match(node) does.
func nodeAffinityMatches(pod *corev1.Pod, node *corev1.Node) bool {
	nodeLabels := labels.Set(node.Labels)
	if len(pod.Spec.NodeSelector) > 0 && !labels.SelectorFromSet(pod.Spec.NodeSelector).Matches(nodeLabels) {
		return false
	}
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return true
	}
	return nodeSelectorMatches(a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution, node)
}

// nodeSelectorMatches reports whether any of the selector's terms matches
// node. A selector without terms matches no node; so does an empty term,
// and a term that is not valid.
func nodeSelectorMatches(ns *corev1.NodeSelector, node *corev1.Node) bool {
	for i := range ns.NodeSelectorTerms {
		if termMatches(&ns.NodeSelectorTerms[i], node) {
			return true
		}
	}
	return false
}

// termMatches reports whether node matches all of the term's label
// expressions and all of its field expressions.
func termMatches(term *corev1.NodeSelectorTerm, node *corev1.Node) bool {
	if len(term.MatchExpressions) == 0 && len(term.MatchFields) == 0 {
		return false
	}
	if len(term.MatchExpressions) > 0 {
		sel, ok := labelSelector(term.MatchExpressions)
		if !ok || !sel.Matches(labels.Set(node.Labels)) {
			return false
		}
	}
	for _, req := range term.MatchFields {
		if !fieldMatches(req, node) {
			return false
		}
	}
	return true
}

// selectionOps maps node selector operators to label selector operators.
var selectionOps = map[corev1.NodeSelectorOperator]selection.Operator{
	corev1.NodeSelectorOpIn:           selection.In,
	corev1.NodeSelectorOpNotIn:        selection.NotIn,
	corev1.NodeSelectorOpExists:       selection.Exists,
	corev1.NodeSelectorOpDoesNotExist: selection.DoesNotExist,
	corev1.NodeSelectorOpGt:           selection.GreaterThan,
	corev1.NodeSelectorOpLt:           selection.LessThan,
}

// labelSelector turns label expressions into a selector; ok is false when
// an expression is not valid (unknown operator, bad key or values, Gt and Lt
// without exactly one integer).
func labelSelector(reqs []corev1.NodeSelectorRequirement) (labels.Selector, bool) {
	sel := labels.NewSelector()
	for _, req := range reqs {
		op, ok := selectionOps[req.Operator]
		if !ok {
			return nil, false
		}
		r, err := labels.NewRequirement(req.Key, op, req.Values)
		if err != nil {
			return nil, false
		}
		sel = sel.Add(*r)
	}
	return sel, true
}

// fieldMatches evaluates a field expression against the node's fields, of
// which there is one: metadata.name. Only In and NotIn with exactly one
// value are valid.
func fieldMatches(req corev1.NodeSelectorRequirement, node *corev1.Node) bool {
	if len(req.Values) != 1 {
		return false
	}
	var value string
	if req.Key == "metadata.name" {
		value = node.Name
	}
	switch req.Operator {
	case corev1.NodeSelectorOpIn:
		return value == req.Values[0]
	case corev1.NodeSelectorOpNotIn:
		return value != req.Values[0]
	default:
		return false
	}
}
