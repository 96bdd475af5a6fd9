package eviction

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// Reason is the status reason and event reason of an eviction and of an
// admission refused under pressure (upstream's eviction.Reason).
const Reason = "Evicted"

// Upstream's message formats (helpers.go), pinned by TestMessageFormatsMatchUpstream.
const (
	nodeLowMessageFmt                   = "The node was low on resource: %v. "
	nodeConditionMessageFmt             = "The node had condition: %v. "
	containerMessageFmt                 = "Container %s was using %s, request is %s, has larger consumption of %v. "
	thresholdMetMessageFmt              = "Threshold quantity: %v, available: %v. "
	containerEphemeralStorageMessageFmt = "Container %s exceeded its local ephemeral storage limit %q. "
	podEphemeralStorageMessageFmt       = "Pod ephemeral local storage usage exceeds the total limit of containers %s. "
	emptyDirMessageFmt                  = "Usage of EmptyDir volume %q exceeds the limit %q. "
)

// Message is upstream's evictionMessage: the starved resource, the
// threshold and what was available, and each container (regular, then
// init) using more than it requested.
func Message(res corev1.ResourceName, pod *corev1.Pod, stats *statsapi.PodStats, act []Threshold, obs Observations) string {
	msg := fmt.Sprintf(nodeLowMessageFmt, res)
	for _, t := range act {
		if signals[t.Signal].resource != res {
			continue
		}
		if o, ok := obs[t.Signal]; ok {
			q := t.Value.Of(o.Capacity)
			msg += fmt.Sprintf(thresholdMetMessageFmt, &q, &o.Available)
			break
		}
	}
	if stats == nil {
		return msg
	}
	containers := append(append([]corev1.Container{}, pod.Spec.Containers...), pod.Spec.InitContainers...)
	for _, cs := range stats.Containers {
		for _, c := range containers {
			if c.Name != cs.Name {
				continue
			}
			req := c.Resources.Requests[res]
			if u := containerUsage(res, cs); u != nil && u.Cmp(req) > 0 {
				msg += fmt.Sprintf(containerMessageFmt, c.Name, u.String(), req.String(), res)
			}
			break
		}
	}
	return msg
}

// containerUsage is what the message reports of a container: working set
// for memory, writable layer plus logs for ephemeral storage.
func containerUsage(res corev1.ResourceName, cs statsapi.ContainerStats) *resource.Quantity {
	switch res {
	case corev1.ResourceMemory:
		if cs.Memory != nil && cs.Memory.WorkingSetBytes != nil {
			return quantity(int64(*cs.Memory.WorkingSetBytes))
		}
	case corev1.ResourceEphemeralStorage:
		if cs.Rootfs != nil && cs.Rootfs.UsedBytes != nil && cs.Logs != nil && cs.Logs.UsedBytes != nil {
			return quantity(int64(*cs.Rootfs.UsedBytes + *cs.Logs.UsedBytes))
		}
	}
	return nil
}

// AdmitMessage is the message of a pod refused under pressure.
func AdmitMessage(conds []corev1.NodeConditionType) string {
	return fmt.Sprintf(nodeConditionMessageFmt, conds)
}
