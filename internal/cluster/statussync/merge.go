package statussync

import (
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berthk8s/berth/internal/pod/podstatus"
	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// maxTerminationMessages is the upstream kubelet's budget for all of a
// pod's container termination messages in its status (12 KiB), shared
// equally among the containers.
const maxTerminationMessages = 12 * 1024

// merge returns the status to write: api (the API object's current status)
// with the fields the kubelet owns taken from ours (berth's generated
// status), as upstream's mergePodStatus. It does not modify its inputs.
//
// A kubelet condition whose status equals the API's keeps the API's
// lastTransitionTime, so a restarted berth does not move it. The API's
// start time and QoS class, once set, are kept. DisruptionTarget is only
// sent with the move to a terminal phase. In a terminal phase, Ready and
// ContainersReady are False (upstream issue 108594). As upstream, a pod
// that could still have running containers (couldRun: its kill has not
// completed) is not moved to a terminal phase: the API's phase, reason and
// message are kept, and DisruptionTarget waits with them.
func merge(api, ours corev1.PodStatus, now time.Time, couldRun bool) corev1.PodStatus {
	out := *api.DeepCopy()
	o := ours.DeepCopy()
	out.ObservedGeneration = o.ObservedGeneration
	out.Phase, out.Reason, out.Message = o.Phase, o.Reason, o.Message
	out.HostIP, out.HostIPs = o.HostIP, o.HostIPs
	out.PodIP, out.PodIPs = o.PodIP, o.PodIPs
	if api.StartTime == nil || api.StartTime.IsZero() {
		out.StartTime = o.StartTime
	}
	if api.QOSClass == "" {
		out.QOSClass = o.QOSClass
	}
	out.InitContainerStatuses = o.InitContainerStatuses
	out.ContainerStatuses = o.ContainerStatuses
	out.EphemeralContainerStatuses = o.EphemeralContainerStatuses
	out.AllocatedResources, out.Resources = o.AllocatedResources, o.Resources
	truncateMessages(&out)

	toTerminal := !podutil.IsTerminal(api.Phase) && podutil.IsTerminal(o.Phase)
	if delayed(api.Phase, o.Phase, couldRun) {
		out.Phase, out.Reason, out.Message = api.Phase, api.Reason, api.Message
		toTerminal = false
	}
	out.Conditions = mergeConditions(api.Conditions, o.Conditions, toTerminal)
	if podutil.IsTerminal(out.Phase) {
		reason := podstatus.ReasonPodFailed
		if out.Phase == corev1.PodSucceeded {
			reason = podstatus.ReasonPodCompleted
		}
		for i := range out.Conditions {
			c := &out.Conditions[i]
			if (c.Type == corev1.PodReady || c.Type == corev1.ContainersReady) && c.Status == corev1.ConditionTrue {
				*c = corev1.PodCondition{Type: c.Type, Status: corev1.ConditionFalse, Reason: reason,
					ObservedGeneration: c.ObservedGeneration, LastTransitionTime: metav1.NewTime(now)}
			}
		}
	}
	return out
}

// mergeConditions keeps the API's conditions the kubelet does not own,
// then appends the kubelet's own; the kubelet's DisruptionTarget replaces
// or joins the API's only when toTerminal.
func mergeConditions(api, ours []corev1.PodCondition, toTerminal bool) []corev1.PodCondition {
	out := make([]corev1.PodCondition, 0, len(api)+len(ours))
	for _, c := range api {
		if !podutil.OwnedByKubelet(c.Type) {
			out = append(out, c)
		}
	}
	for _, c := range ours {
		switch {
		case podutil.OwnedByKubelet(c.Type):
			out = append(out, keepTransitionTime(c, api))
		case podutil.SharedWithKubelet(c.Type) && toTerminal:
			c = keepTransitionTime(c, api)
			if i := conditionIndex(out, c.Type); i >= 0 {
				out[i] = c
			} else {
				out = append(out, c)
			}
		}
	}
	return out
}

func keepTransitionTime(c corev1.PodCondition, api []corev1.PodCondition) corev1.PodCondition {
	if i := conditionIndex(api, c.Type); i >= 0 && api[i].Status == c.Status && !api[i].LastTransitionTime.IsZero() {
		c.LastTransitionTime = api[i].LastTransitionTime
	}
	return c
}

func conditionIndex(cs []corev1.PodCondition, t corev1.PodConditionType) int {
	for i := range cs {
		if cs[i].Type == t {
			return i
		}
	}
	return -1
}

// truncateMessages cuts every container's termination message to its share
// of maxTerminationMessages, as upstream's normalizeStatus.
func truncateMessages(st *corev1.PodStatus) {
	n := len(st.ContainerStatuses) + len(st.InitContainerStatuses) + len(st.EphemeralContainerStatuses)
	if n == 0 {
		return
	}
	limit := maxTerminationMessages / n
	cut := func(s *corev1.ContainerState) {
		if s.Terminated != nil && len(s.Terminated.Message) > limit {
			s.Terminated.Message = s.Terminated.Message[:limit]
		}
	}
	for _, list := range [][]corev1.ContainerStatus{st.ContainerStatuses, st.InitContainerStatuses, st.EphemeralContainerStatuses} {
		for i := range list {
			cut(&list[i].State)
			cut(&list[i].LastTerminationState)
		}
	}
}

// equal reports whether two statuses are the same once put the way the API
// server stores them: times to the second, container statuses by name.
func equal(a, b corev1.PodStatus) bool {
	return apiequality.Semantic.DeepEqual(normalize(a), normalize(b))
}

// kubeletEqual is equal over what the kubelet writes: conditions other
// writers own are left out.
func kubeletEqual(a, b corev1.PodStatus) bool {
	return equal(kubeletView(a), kubeletView(b))
}

func kubeletView(st corev1.PodStatus) corev1.PodStatus {
	out := *st.DeepCopy()
	out.Conditions = out.Conditions[:0]
	for _, c := range st.Conditions {
		if podutil.OwnedByKubelet(c.Type) || podutil.SharedWithKubelet(c.Type) {
			out.Conditions = append(out.Conditions, c)
		}
	}
	return out
}

func normalize(st corev1.PodStatus) corev1.PodStatus {
	out := *st.DeepCopy()
	sec := func(t *metav1.Time) {
		if t != nil {
			*t = t.Rfc3339Copy()
		}
	}
	sec(out.StartTime)
	for i := range out.Conditions {
		sec(&out.Conditions[i].LastProbeTime)
		sec(&out.Conditions[i].LastTransitionTime)
	}
	state := func(s *corev1.ContainerState) {
		if s.Running != nil {
			sec(&s.Running.StartedAt)
		}
		if s.Terminated != nil {
			sec(&s.Terminated.StartedAt)
			sec(&s.Terminated.FinishedAt)
		}
	}
	for _, list := range [][]corev1.ContainerStatus{out.ContainerStatuses, out.InitContainerStatuses, out.EphemeralContainerStatuses} {
		for i := range list {
			state(&list[i].State)
			state(&list[i].LastTerminationState)
		}
		sort.SliceStable(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	}
	sort.SliceStable(out.Conditions, func(i, j int) bool { return out.Conditions[i].Type < out.Conditions[j].Type })
	return out
}
