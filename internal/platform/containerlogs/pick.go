package containerlogs

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// instance is the container instance whose log a request reads.
type instance struct {
	// ID is the runtime's container ID, without the "<runtime>://" prefix.
	ID string
	// RestartCount names its log file, <RestartCount>.log, should the
	// runtime no longer know the container.
	RestartCount int
}

// pickInstance chooses the instance of the named container whose log to
// read, from the pod's status, as upstream does: the previous terminated
// instance when previous is set, else the running one, else the last
// one that ran. Its errors are upstream's, answered with 400.
func pickInstance(podName string, status *corev1.PodStatus, container string, previous bool) (instance, error) {
	cs, found := findStatus(status, container)
	if !found {
		return instance{}, fmt.Errorf("container %q in pod %q is not available", container, podName)
	}
	current := instance{ID: trimScheme(cs.ContainerID), RestartCount: int(cs.RestartCount)}
	last := cs.LastTerminationState.Terminated
	lastInstance := instance{RestartCount: max(int(cs.RestartCount)-1, 0)}
	if last != nil {
		lastInstance.ID = trimScheme(last.ContainerID)
	}
	switch {
	case previous:
		if last == nil || last.ContainerID == "" {
			return instance{}, fmt.Errorf("previous terminated container %q in pod %q not found", container, podName)
		}
		return lastInstance, nil
	case cs.State.Running != nil:
		return current, nil
	case cs.State.Terminated != nil:
		if cs.State.Terminated.ContainerID != "" {
			return current, nil
		}
		if last != nil && last.ContainerID != "" {
			return lastInstance, nil
		}
		return instance{}, fmt.Errorf("container %q in pod %q is terminated", container, podName)
	case last != nil:
		if last.ContainerID == "" {
			return instance{}, fmt.Errorf("container %q in pod %q is terminated", container, podName)
		}
		return lastInstance, nil
	case cs.State.Waiting != nil:
		return instance{}, waitingError(podName, container, cs.State.Waiting.Reason)
	}
	return instance{}, fmt.Errorf("container %q in pod %q is waiting to start - no logs available", container, podName)
}

func waitingError(podName, container, reason string) error {
	switch reason {
	case "ErrImagePull":
		return fmt.Errorf("container %q in pod %q is waiting to start: image can't be pulled", container, podName)
	case "ImagePullBackOff":
		return fmt.Errorf("container %q in pod %q is waiting to start: trying and failing to pull image", container, podName)
	}
	return fmt.Errorf("container %q in pod %q is waiting to start: %v", container, podName, reason)
}

func findStatus(status *corev1.PodStatus, name string) (corev1.ContainerStatus, bool) {
	for _, list := range [][]corev1.ContainerStatus{status.ContainerStatuses, status.InitContainerStatuses, status.EphemeralContainerStatuses} {
		for _, cs := range list {
			if cs.Name == name {
				return cs, true
			}
		}
	}
	return corev1.ContainerStatus{}, false
}

// hasContainer reports whether the pod's spec names the container.
func hasContainer(pod *corev1.Pod, name string) bool {
	for _, c := range pod.Spec.Containers {
		if c.Name == name {
			return true
		}
	}
	for _, c := range pod.Spec.InitContainers {
		if c.Name == name {
			return true
		}
	}
	for _, c := range pod.Spec.EphemeralContainers {
		if c.Name == name {
			return true
		}
	}
	return false
}

// trimScheme drops the "<runtime>://" prefix of a status container ID.
func trimScheme(id string) string {
	if _, after, ok := strings.Cut(id, "://"); ok {
		return after
	}
	return id
}
