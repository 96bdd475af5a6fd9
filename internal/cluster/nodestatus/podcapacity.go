package nodestatus

// PodCapacity is the node's pods capacity, decided as upstream's
// MachineInfo setter decides it: maxPods, capped at podsPerCore × numCPU
// when podsPerCore (--pods-per-core) is positive. Node status reports it
// and standalone admission bounds the pod count by it.
func PodCapacity(maxPods, podsPerCore int32, numCPU int) int32 {
	if podsPerCore <= 0 {
		return maxPods
	}
	return int32(min(int64(podsPerCore)*int64(numCPU), int64(maxPods)))
}
