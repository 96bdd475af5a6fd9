package cpumanager

import (
	"maps"

	"k8s.io/utils/cpuset"
)

// State is what the CPU manager remembers and checkpoints: the shared pool
// (upstream's defaultCpuSet) and the exclusive CPUs of each container, by
// pod UID and container name. A plain value; Clone before changing a
// State someone else holds.
type State struct {
	Default     cpuset.CPUSet
	Assignments map[string]map[string]cpuset.CPUSet
}

// Clone returns a deep copy.
func (s State) Clone() State {
	out := State{Default: s.Default.Clone(), Assignments: make(map[string]map[string]cpuset.CPUSet, len(s.Assignments))}
	for pod, cs := range s.Assignments {
		out.Assignments[pod] = maps.Clone(cs)
	}
	return out
}

// Exclusive returns the container's exclusive CPUs, if it has any.
func (s State) Exclusive(podUID, container string) (cpuset.CPUSet, bool) {
	cs, ok := s.Assignments[podUID][container]
	return cs, ok
}

// CPUsOf returns the CPUs the container may run on: its exclusive CPUs, or
// the shared pool (upstream's GetCPUSetOrDefault). Empty with the none
// policy, whose shared pool is empty: then the container is not pinned.
func (s State) CPUsOf(podUID, container string) cpuset.CPUSet {
	if cs, ok := s.Exclusive(podUID, container); ok {
		return cs
	}
	return s.Default
}

func (s *State) set(podUID, container string, cpus cpuset.CPUSet) {
	if s.Assignments == nil {
		s.Assignments = map[string]map[string]cpuset.CPUSet{}
	}
	if s.Assignments[podUID] == nil {
		s.Assignments[podUID] = map[string]cpuset.CPUSet{}
	}
	s.Assignments[podUID][container] = cpus
}

func (s *State) delete(podUID, container string) {
	delete(s.Assignments[podUID], container)
	if len(s.Assignments[podUID]) == 0 {
		delete(s.Assignments, podUID)
	}
}
