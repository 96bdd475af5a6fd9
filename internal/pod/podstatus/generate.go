package podstatus

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berthk8s/berth/internal/pod/podplan"
	"github.com/berthk8s/berth/internal/podkit/podutil"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// DefaultRuntimeName prefixes container IDs ("containerd://<id>").
const DefaultRuntimeName = "containerd"

// Input is everything Generate may look at.
type Input struct {
	// Pod is the config pod with its allocated resources in place of the
	// spec's (the caller substitutes them); required.
	Pod *corev1.Pod
	// Runtime is the pod's full runtime status; nil or empty when nothing
	// of the pod exists in the runtime.
	Runtime *runtimestate.Pod
	// Previous is the last status berth generated for the pod, or nil; the
	// pod's own Status is used in its place when nil.
	Previous *corev1.PodStatus
	// Failures says, by container name, why a container could not be
	// started in the last sync (ErrImagePull, CrashLoopBackOff, ...). It is
	// shown as the container's waiting reason and message.
	Failures map[string]runtimestate.StartFailure
	// Readiness holds readiness probe results by container name. A name
	// absent from the map (or a nil map) means the container has no
	// readiness probe: it is ready as soon as it runs and has started.
	Readiness map[string]bool
	// Startup holds startup probe results by container name, with the same
	// convention: absent means no startup probe, so running means started.
	Startup map[string]bool
	// Terminal is true once the pod worker decided the pod is finished
	// (upstream podIsTerminal): containers will not be restarted whatever
	// the restart policy, so all-stopped containers give a terminal phase.
	Terminal bool
	// RestartAll is where the pod is in a RestartAllContainers restart, as
	// this sync's plan says (podplan.Actions.RestartAll); the zero value,
	// none, outside SyncPod. It drives the AllContainersRestarting
	// condition and the statuses of the containers the reset removed.
	RestartAll podplan.RestartAll
	// Termination, when set, is why berth itself ends the pod (node
	// shutdown, eviction): it fixes the phase, reason and message and adds
	// the DisruptionTarget condition (see applyTermination).
	Termination *Termination
	// Actuated are the resources last applied to each container, by name
	// (allocation's actuated state): what the runtime does not report of
	// them (the memory request, everything when it reports nothing) is
	// taken from here, as upstream. A container absent from the map has
	// no record: its status keeps what the previous one showed.
	Actuated map[string]corev1.ResourceRequirements
	// ActuatedPod is the pod-level resources last applied to the pod
	// cgroup (nil: none), meaningful when Actuated is set: a running pod's
	// status.resources show what its cgroup has.
	ActuatedPod *corev1.ResourceRequirements
	// Resize holds the pod's PodResizePending and PodResizeInProgress
	// conditions, as their owner keeps them; Generate only places them
	// (resizeConditions). Any other type is ignored.
	Resize []corev1.PodCondition
	// ResourceHealth is the health of each regular container's devices,
	// by container name (the device manager's ResourceHealth): its
	// allocatedResourcesStatus entries of those resources (upstream's
	// UpdateAllocatedResourcesStatus; ResourceHealthStatus is on in
	// v1.37). A container absent from the map keeps what it has.
	ResourceHealth map[string][]corev1.ResourceStatus
	// ClaimHealth is the health of the devices of each regular
	// container's claims, by container name (the DRA manager's
	// ClaimHealth, whose entries are named "claim:..."): merged after
	// ResourceHealth as upstream's DRA UpdateAllocatedResourcesStatus
	// (claimHealth). Upstream gives neither to init containers.
	ClaimHealth map[string][]corev1.ResourceStatus
	// Wait is why the pod's last sync stopped before its sandbox was
	// ready (a volume, a claim, the sandbox or its network failing), nil
	// when it did not: while PodReadyToStartContainers is False, its
	// message says so after upstream's.
	Wait *PodWait
	// HostIPs are the node's IPs, primary first (at most two are used).
	HostIPs []string
	// RuntimeName prefixes container IDs; DefaultRuntimeName when empty.
	RuntimeName string
	Now         time.Time
}

// Generate returns the pod's status for the given snapshot. It does not
// modify its input; the result shares no memory with it.
func Generate(in Input) corev1.PodStatus {
	pod := in.Pod
	if in.RuntimeName == "" {
		in.RuntimeName = DefaultRuntimeName
	}
	old := pod.Status.DeepCopy()
	if in.Previous != nil {
		old = in.Previous.DeepCopy()
	}

	var s corev1.PodStatus
	s.ObservedGeneration = pod.Generation
	s.QOSClass = old.QOSClass
	if s.QOSClass == "" {
		s.QOSClass = podutil.QOSClass(pod)
	}
	hasInit := len(pod.Spec.InitContainers) > 0
	s.ContainerStatuses = containerStatuses(&in, old.ContainerStatuses, pod.Spec.Containers, hasInit, false)
	s.InitContainerStatuses = containerStatuses(&in, old.InitContainerStatuses, pod.Spec.InitContainers, hasInit, true)
	s.EphemeralContainerStatuses = ephemeralStatuses(&in, old.EphemeralContainerStatuses, hasInit)
	resourceHealth(s.ContainerStatuses, in.ResourceHealth)
	claimHealth(s.ContainerStatuses, pod.Spec.Containers, in.ClaimHealth)

	all := make([]corev1.ContainerStatus, 0, len(s.InitContainerStatuses)+len(s.ContainerStatuses))
	all = append(all, s.InitContainerStatuses...)
	all = append(all, s.ContainerStatuses...)
	s.Phase = phase(pod, all, in.Terminal, anyRegularContainerRunning(pod, in.Runtime))
	s.Phase, s.Reason, s.Message = mergePhase(s.Phase, old, &pod.Status)

	s.Conditions = conditions(&in, old, all, s.Phase)
	if in.Termination != nil {
		applyTermination(&s, in.Termination, pod, old, metav1.NewTime(in.Now))
	}
	s.HostIP, s.HostIPs = hostIPs(in.HostIPs)
	s.PodIP, s.PodIPs = podIPs(&in, old)

	podResources(&s, pod, &in)

	s.StartTime = old.StartTime
	if s.StartTime == nil || s.StartTime.IsZero() {
		t := metav1.NewTime(in.Now)
		s.StartTime = &t
	}
	return s
}

// resourceHealth puts each container's device health into its
// allocatedResourcesStatus, replacing the entry of the same resource name
// or adding one, as upstream's UpdateAllocatedResourcesStatus.
func resourceHealth(statuses []corev1.ContainerStatus, health map[string][]corev1.ResourceStatus) {
	for i := range statuses {
		st := &statuses[i]
		for _, rs := range health[st.Name] {
			rs = *rs.DeepCopy()
			if st.AllocatedResourcesStatus == nil {
				st.AllocatedResourcesStatus = []corev1.ResourceStatus{}
			}
			found := false
			for j := range st.AllocatedResourcesStatus {
				if st.AllocatedResourcesStatus[j].Name == rs.Name {
					st.AllocatedResourcesStatus[j], found = rs, true
					break
				}
			}
			if !found {
				st.AllocatedResourcesStatus = append(st.AllocatedResourcesStatus, rs)
			}
		}
	}
}

// claimHealth merges the containers' claim entries into their
// allocatedResourcesStatus as upstream's DRA UpdateAllocatedResourcesStatus
// does, for each container whose spec names claims: an entry replaces the
// one of its name or is added, then every entry without resources is
// dropped (nil when none is left). Upstream rebuilds the list from a map,
// in no order; berth keeps the device plugins' entries first and the
// claims in the order the container names them.
func claimHealth(statuses []corev1.ContainerStatus, specs []corev1.Container, health map[string][]corev1.ResourceStatus) {
	for i := range statuses {
		st := &statuses[i]
		j := slices.IndexFunc(specs, func(c corev1.Container) bool { return c.Name == st.Name })
		if j < 0 || len(specs[j].Resources.Claims) == 0 {
			continue
		}
		list := st.AllocatedResourcesStatus
		for _, rs := range health[st.Name] {
			rs = *rs.DeepCopy()
			if k := slices.IndexFunc(list, func(e corev1.ResourceStatus) bool { return e.Name == rs.Name }); k >= 0 {
				list[k] = rs
			} else {
				list = append(list, rs)
			}
		}
		list = slices.DeleteFunc(list, func(e corev1.ResourceStatus) bool { return len(e.Resources) == 0 })
		if len(list) == 0 {
			list = nil
		}
		st.AllocatedResourcesStatus = list
	}
}

// mergePhase keeps a terminal phase once reached (in the previous status or
// in the API's status: pods never leave a terminal phase) and preserves the
// reason and message that go with an unchanged phase.
func mergePhase(p corev1.PodPhase, old, api *corev1.PodStatus) (corev1.PodPhase, string, string) {
	if !podutil.IsTerminal(p) {
		switch {
		case podutil.IsTerminal(old.Phase):
			p = old.Phase
		case podutil.IsTerminal(api.Phase):
			p = api.Phase
		}
	}
	if podutil.IsTerminal(api.Phase) {
		p = api.Phase
	}
	if p != old.Phase {
		return p, "", ""
	}
	reason, message := old.Reason, old.Message
	if reason == "" {
		reason = api.Reason
	}
	if message == "" {
		message = api.Message
	}
	return p, reason, message
}

// anyRegularContainerRunning is upstream's HasAnyActiveRegularContainerStarted:
// a regular container runs, so the pod has been initialized before.
func anyRegularContainerRunning(pod *corev1.Pod, rt *runtimestate.Pod) bool {
	if rt == nil {
		return false
	}
	for _, c := range rt.Containers {
		if c.State == runtimestate.ContainerRunning && specByName(pod.Spec.Containers, c.Name) != nil {
			return true
		}
	}
	return false
}

func specByName(cs []corev1.Container, name string) *corev1.Container {
	for i := range cs {
		if cs[i].Name == name {
			return &cs[i]
		}
	}
	return nil
}

func statusByName(ss []corev1.ContainerStatus, name string) (*corev1.ContainerStatus, bool) {
	for i := range ss {
		if ss[i].Name == name {
			return &ss[i], true
		}
	}
	return nil, false
}
