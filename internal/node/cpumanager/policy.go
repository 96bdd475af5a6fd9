package cpumanager

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/utils/cpuset"

	"github.com/berthk8s/berth/internal/node/topology"
	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// Reasons of an admission failure, as upstream words them.
const (
	ReasonSMTAlignment = "SMTAlignmentError"
	ReasonUnexpected   = "UnexpectedAdmissionError"
)

// SMTAlignmentError is upstream's: full-pcpus-only and a request that is
// not a multiple of the threads per core, or more than the free whole
// cores hold.
type SMTAlignmentError struct {
	RequestedCPUs         int
	CpusPerCore           int
	AvailablePhysicalCPUs int
	CausedByPhysicalCPUs  bool
}

func (e SMTAlignmentError) Error() string {
	if e.CausedByPhysicalCPUs {
		return fmt.Sprintf("SMT Alignment Error: not enough free physical CPUs: available physical CPUs = %d, requested CPUs = %d, CPUs per core = %d", e.AvailablePhysicalCPUs, e.RequestedCPUs, e.CpusPerCore)
	}
	return fmt.Sprintf("SMT Alignment Error: requested %d cpus not multiple cpus per core = %d", e.RequestedCPUs, e.CpusPerCore)
}

// AdmitReason returns the reason and message of a pod's rejection for an
// allocation error, as upstream's admission.GetPodAdmitResult: an
// SMTAlignmentError is itself, anything else is unexpected.
func AdmitReason(err error) (reason, message string) {
	var smt SMTAlignmentError
	if errors.As(err, &smt) {
		return ReasonSMTAlignment, smt.Error()
	}
	return ReasonUnexpected, fmt.Sprintf("Allocate failed due to %v, which is unexpected", err)
}

// Static is upstream's static policy: Guaranteed pods' containers with
// an integer CPU request get exclusive CPUs; every other container runs on
// the shared pool, all CPUs but those given out. Its methods are pure:
// they take a State and return a new one. A Static is read-only once built.
type Static struct {
	topo             *Topology
	opts             Options
	reserved         cpuset.CPUSet
	reservedPhysical cpuset.CPUSet
}

// NewStatic builds the static policy as upstream's NewStaticPolicy:
// reservedCPUs (reservedSystemCPUs) when given, else numReserved CPUs
// picked by topology from the lowest cores; the whole cores of the
// reserved CPUs are kept out of full-pcpus-only's count.
func NewStatic(topo *Topology, numReserved int, reservedCPUs cpuset.CPUSet, opts Options) (*Static, error) {
	p := &Static{topo: topo, opts: opts}
	reserved := reservedCPUs
	if reserved.Size() == 0 {
		reserved, _ = takeByTopology(topo, topo.CPUDetails.CPUs(), numReserved, opts.DistributeCPUsAcrossCores)
	}
	if reserved.Size() != numReserved {
		return nil, fmt.Errorf("[cpumanager] unable to reserve the required amount of CPUs (size of %s did not equal %d)", reserved, numReserved)
	}
	var physical cpuset.CPUSet
	for _, cpu := range reserved.UnsortedList() {
		core, err := topo.CPUCoreID(cpu)
		if err != nil {
			return nil, fmt.Errorf("[cpumanager] unable to build the reserved physical CPUs from the reserved set: %w", err)
		}
		physical = physical.Union(topo.CPUDetails.CPUsInCores(core))
	}
	p.reserved, p.reservedPhysical = reserved, physical
	return p, nil
}

// Reserved returns the reserved CPUs.
func (p *Static) Reserved() cpuset.CPUSet { return p.reserved }

// Start checks a restored state as upstream's validateState and returns
// the state to run with: a new one (every CPU shared, less the reserved
// with strict-cpu-reservation) when s is empty.
func (p *Static) Start(s State) (State, error) {
	all := p.topo.CPUDetails.CPUs()
	if p.opts.StrictCPUReservation {
		all = all.Difference(p.reserved)
	}
	if s.Default.IsEmpty() {
		if len(s.Assignments) != 0 {
			return s, fmt.Errorf("default cpuset cannot be empty")
		}
		return State{Default: all, Assignments: map[string]map[string]cpuset.CPUSet{}}, nil
	}
	if p.opts.StrictCPUReservation {
		if in := p.reserved.Intersection(s.Default); !in.IsEmpty() {
			return s, fmt.Errorf("some of strictly reserved cpus: %q are present in defaultCpuSet: %q", in.String(), s.Default.String())
		}
	} else if !p.reserved.Intersection(s.Default).Equals(p.reserved) {
		return s, fmt.Errorf("not all reserved cpus: %q are present in defaultCpuSet: %q", p.reserved.String(), s.Default.String())
	}
	known := s.Default
	for pod, cs := range s.Assignments {
		for container, set := range cs {
			if !s.Default.Intersection(set).IsEmpty() {
				return s, fmt.Errorf("pod: %s, container: %s cpuset: %q overlaps with default cpuset %q", pod, container, set.String(), s.Default.String())
			}
			known = known.Union(set)
		}
	}
	if !known.Equals(all) {
		return s, fmt.Errorf("current set of available CPUs %q doesn't match with CPUs in state %q", all.String(), known.String())
	}
	return s, nil
}

// Allocatable returns the CPUs exclusive allocations may come from.
func (p *Static) Allocatable() cpuset.CPUSet {
	return p.topo.CPUDetails.CPUs().Difference(p.reserved)
}

// AllocatePod gives exclusive CPUs to the pod's containers that get them,
// init containers first, as upstream's topology manager scope (policy
// none) calls the static policy's Allocate for each. A regular init
// container's CPUs may be reused by the containers after it (upstream's
// cpusToReuse); a sidecar's may not. It returns the new state, or s and
// the first error.
func (p *Static) AllocatePod(s State, pod *corev1.Pod) (State, error) {
	out := s.Clone()
	reuse := cpuset.New()
	for _, c := range pod.Spec.InitContainers {
		cs, err := p.allocate(&out, pod, &c, reuse, 0)
		if err != nil {
			return s, err
		}
		if podutil.IsSidecar(&c) {
			reuse = reuse.Difference(cs)
		} else {
			reuse = reuse.Union(cs)
		}
	}
	for _, c := range pod.Spec.Containers {
		cs, err := p.allocate(&out, pod, &c, reuse, 0)
		if err != nil {
			return s, err
		}
		reuse = reuse.Difference(cs)
	}
	return out, nil
}

// AllocateContainer gives one container its exclusive CPUs, from the NUMA
// nodes of affinity first (the topology manager's merged hint; zero: no
// preference), as upstream's Allocate with a topology manager. The
// containers before it in the pod are expected allocated already (their
// CPUs to reuse come from s). It returns the new state, or s and the error.
func (p *Static) AllocateContainer(s State, pod *corev1.Pod, c *corev1.Container, affinity topology.Mask) (State, error) {
	out := s.Clone()
	if _, err := p.allocate(&out, pod, c, reusable(s, pod, c.Name), affinity); err != nil {
		return s, err
	}
	return out, nil
}

// allocate is upstream's allocateForAdd for one container: the CPUs it
// holds (already assigned, or just allocated; empty on the shared pool).
func (p *Static) allocate(s *State, pod *corev1.Pod, c *corev1.Container, reuse cpuset.CPUSet, affinity topology.Mask) (cpuset.CPUSet, error) {
	n := GuaranteedCPUs(pod, c)
	if n == 0 || resourcehelper.IsPodLevelResourcesSet(pod) {
		// The shared pool; pod-level resources need PodLevelResourceManagers,
		// which berth refuses, so upstream skips them too.
		return cpuset.New(), nil
	}
	if cs, ok := s.Exclusive(string(pod.UID), c.Name); ok {
		return cs, nil
	}
	if err := p.enforceSMTAlignment(*s, n); err != nil {
		return cpuset.New(), err
	}
	available := s.Default.Difference(p.reserved).Union(reuse)
	cs, err := p.alignedFirst(available, n, affinity)
	if err != nil {
		return cpuset.New(), err
	}
	s.Default = s.Default.Difference(cs)
	s.set(string(pod.UID), c.Name, cs)
	return cs, nil
}

func (p *Static) enforceSMTAlignment(s State, n int) error {
	if !p.opts.FullPhysicalCPUsOnly {
		return nil
	}
	perCore := p.topo.CPUsPerCore()
	if n%perCore != 0 {
		return SMTAlignmentError{RequestedCPUs: n, CpusPerCore: perCore}
	}
	if avail := s.Default.Difference(p.reservedPhysical).Size(); n > avail {
		return SMTAlignmentError{RequestedCPUs: n, CpusPerCore: perCore, AvailablePhysicalCPUs: avail, CausedByPhysicalCPUs: true}
	}
	return nil
}

// Remove releases a container's exclusive CPUs to the shared pool, but
// those its pod's other containers still hold (upstream's RemoveContainer).
func (p *Static) Remove(s State, podUID, container string) State {
	cs, ok := s.Exclusive(podUID, container)
	if !ok {
		return s
	}
	out := s.Clone()
	out.delete(podUID, container)
	for _, other := range out.Assignments[podUID] {
		cs = cs.Difference(other)
	}
	out.Default = out.Default.Union(cs)
	return out
}

// GuaranteedCPUs is the number of exclusive CPUs a container gets: its CPU
// request when the pod is Guaranteed and the request is an integer, else 0
// (upstream's guaranteedCPUs).
func GuaranteedCPUs(pod *corev1.Pod, c *corev1.Container) int {
	if podutil.QOSClass(pod) != corev1.PodQOSGuaranteed {
		return 0
	}
	q := c.Resources.Requests[corev1.ResourceCPU]
	if !isIntegral(q) {
		return 0
	}
	return int(q.Value())
}

func isIntegral(q resource.Quantity) bool { return q.Value()*1000 == q.MilliValue() }
