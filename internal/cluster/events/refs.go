package events

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/reference"
)

// podRef returns the reference to pod that events carry as their
// involvedObject: kind Pod, apiVersion v1, namespace, name, uid and
// resourceVersion.
func podRef(pod *corev1.Pod) (*corev1.ObjectReference, error) {
	ref, err := reference.GetReference(scheme.Scheme, pod)
	if err != nil {
		return nil, fmt.Errorf("get reference to pod %q: %w", pod.Namespace+"/"+pod.Name, err)
	}
	return ref, nil
}

// containerRef returns the reference to a container of pod: the pod's
// reference with fieldPath naming the container, as upstream's
// GenerateContainerRef builds it. It fails when pod has no container of that
// name.
func containerRef(pod *corev1.Pod, container string) (*corev1.ObjectReference, error) {
	path, err := containerFieldPath(pod, container)
	if err != nil {
		return nil, err
	}
	ref, err := reference.GetPartialReference(scheme.Scheme, pod, path)
	if err != nil {
		return nil, fmt.Errorf("get reference to container %q: %w", container, err)
	}
	return ref, nil
}

// containerFieldPath returns "spec.containers{name}",
// "spec.initContainers{name}" or "spec.ephemeralContainers{name}".
func containerFieldPath(pod *corev1.Pod, name string) (string, error) {
	for _, c := range pod.Spec.Containers {
		if c.Name == name {
			return fmt.Sprintf("spec.containers{%s}", name), nil
		}
	}
	for _, c := range pod.Spec.InitContainers {
		if c.Name == name {
			return fmt.Sprintf("spec.initContainers{%s}", name), nil
		}
	}
	for _, c := range pod.Spec.EphemeralContainers {
		if c.Name == name {
			return fmt.Sprintf("spec.ephemeralContainers{%s}", name), nil
		}
	}
	return "", fmt.Errorf("find container %q in pod %q: not found", name, pod.Namespace+"/"+pod.Name)
}

// nodeRef is the reference upstream's kubelet records node events against:
// kind Node, the node's name, and the name again as its UID.
func nodeRef(nodeName string) *corev1.ObjectReference {
	return &corev1.ObjectReference{
		Kind:      "Node",
		Name:      nodeName,
		UID:       types.UID(nodeName),
		Namespace: "",
	}
}
