package nodestatus

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// StatusPatch computes the strategic merge patch that takes old to node,
// for the status subresource, as upstream's PatchNodeStatus: the spec is
// left out, metadata and status changes are kept. NodeStatus.Addresses is
// wrongly declared a merge list, so a change of addresses is sent as a
// replacement of the whole list.
func StatusPatch(old, node *corev1.Node) ([]byte, error) {
	oldData, err := json.Marshal(old)
	if err != nil {
		return nil, fmt.Errorf("encode node %q: %w", old.Name, err)
	}
	replaceAddresses := len(old.Status.Addresses) > 0 &&
		!apiequality.Semantic.DeepEqual(old.Status.Addresses, node.Status.Addresses)
	diff := node.DeepCopy()
	diff.Spec = old.Spec
	if replaceAddresses {
		diff.Status.Addresses = old.Status.Addresses
	}
	newData, err := json.Marshal(diff)
	if err != nil {
		return nil, fmt.Errorf("encode node %q: %w", node.Name, err)
	}
	patch, err := strategicpatch.CreateTwoWayMergePatch(oldData, newData, corev1.Node{})
	if err != nil {
		return nil, fmt.Errorf("compute status patch of node %q: %w", node.Name, err)
	}
	if !replaceAddresses {
		return patch, nil
	}
	return withAddresses(patch, node.Status.Addresses)
}

// withAddresses adds status.addresses with a "$patch": "replace" directive
// to a patch.
func withAddresses(patch []byte, addrs []corev1.NodeAddress) ([]byte, error) {
	var m map[string]any
	if err := json.Unmarshal(patch, &m); err != nil {
		return nil, fmt.Errorf("decode status patch: %w", err)
	}
	list := make([]any, 0, len(addrs)+1)
	for _, a := range addrs {
		list = append(list, map[string]any{"type": string(a.Type), "address": a.Address})
	}
	list = append(list, map[string]any{"$patch": "replace"})
	status, _ := m["status"].(map[string]any)
	if status == nil {
		status = map[string]any{}
		m["status"] = status
	}
	status["addresses"] = list
	return json.Marshal(m)
}
