package nodeshutdown

import (
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// Upstream's words and numbers (pkg/kubelet/nodeshutdown,
// pkg/apis/scheduling), pinned by TestUpstreamValues.
const (
	// Reason and Message are the status of a pod ended by the shutdown.
	Reason  = "Terminated"
	Message = "Pod was terminated in response to imminent node shutdown."
	// NotAdmittedReason and NotAdmittedMessage refuse pods while the node
	// shuts down.
	NotAdmittedReason  = "NodeShutdown"
	NotAdmittedMessage = "Pod was rejected as the node is shutting down."

	// defaultPriority is the priority of pods without one
	// (scheduling.DefaultPriorityWhenNoDefaultClassExists);
	// systemCriticalPriority is where system-cluster-critical and
	// system-node-critical begin (scheduling.SystemCriticalPriority).
	defaultPriority        int32 = 0
	systemCriticalPriority int32 = 2_000_000_000
)

// Period is the shutdown budget of the pods from Priority up to the next
// Period's priority.
type Period struct {
	Priority           int32
	GracePeriodSeconds int64
}

// Periods returns the shutdown budgets, lowest priority first:
// shutdownGracePeriodByPodPriority when set, else shutdownGracePeriod split
// as upstream's migrateConfig does (the priority-0 group gets what
// shutdownGracePeriodCriticalPods leaves, the system-critical group the
// rest). Nil means graceful node shutdown is off.
func Periods(kc *kubeletconfigv1beta1.KubeletConfiguration) []Period {
	var out []Period
	if len(kc.ShutdownGracePeriodByPodPriority) > 0 {
		for _, p := range kc.ShutdownGracePeriodByPodPriority {
			out = append(out, Period{Priority: p.Priority, GracePeriodSeconds: p.ShutdownGracePeriodSeconds})
		}
	} else {
		total, critical := kc.ShutdownGracePeriod.Duration, kc.ShutdownGracePeriodCriticalPods.Duration
		if total == 0 || critical > total {
			return nil
		}
		out = []Period{
			{Priority: defaultPriority, GracePeriodSeconds: int64((total - critical) / time.Second)},
			{Priority: systemCriticalPriority, GracePeriodSeconds: int64(critical / time.Second)},
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Priority < out[j].Priority })
	return out
}

// Requested is the whole budget: what logind's InhibitDelayMaxSec must
// allow.
func Requested(periods []Period) time.Duration {
	var sum int64
	for _, p := range periods {
		sum += p.GracePeriodSeconds
	}
	return time.Duration(sum) * time.Second
}

// Group is one step of a shutdown: its pods are ended together and given
// GracePeriodSeconds before the next group starts.
type Group struct {
	Priority           int32
	GracePeriodSeconds int64
	Pods               []Kill
}

// Kill is one pod to end and the grace period its containers get: the
// group's, or the pod's own terminationGracePeriodSeconds when shorter.
type Kill struct {
	Pod                *corev1.Pod
	GracePeriodSeconds int64
}

// Plan puts every pod in the group of the highest Period whose priority is
// at most the pod's (pods below the lowest go to the first group), as
// upstream's groupByPriority. The groups come lowest priority first, one
// per Period, empty ones included; pods keep their given order. It is pure.
func Plan(periods []Period, pods []*corev1.Pod) []Group {
	if len(periods) == 0 {
		return nil
	}
	groups := make([]Group, len(periods))
	for i, p := range periods {
		groups[i] = Group{Priority: p.Priority, GracePeriodSeconds: p.GracePeriodSeconds}
	}
	for _, pod := range pods {
		var prio int32
		if pod.Spec.Priority != nil {
			prio = *pod.Spec.Priority
		}
		i := sort.Search(len(groups), func(i int) bool { return groups[i].Priority >= prio })
		switch {
		case i == len(groups):
			i--
		case i > 0 && groups[i].Priority > prio:
			i--
		}
		g := &groups[i]
		grace := g.GracePeriodSeconds
		if tg := pod.Spec.TerminationGracePeriodSeconds; tg != nil && *tg < grace {
			grace = *tg
		}
		g.Pods = append(g.Pods, Kill{Pod: pod, GracePeriodSeconds: grace})
	}
	return groups
}
