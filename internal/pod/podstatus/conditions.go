package podstatus

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berthk8s/berth/internal/pod/podplan"
	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// Condition reasons, as upstream.
const (
	ReasonPodCompleted             = "PodCompleted"
	ReasonPodFailed                = "PodFailed"
	ReasonContainersNotReady       = "ContainersNotReady"
	ReasonContainersNotInitialized = "ContainersNotInitialized"
	ReasonReadinessGatesNotReady   = "ReadinessGatesNotReady"
	// ReasonPodSandboxNotReady: PodReadyToStartContainers is False (its
	// message is podplan.SandboxVerdict.Why, then berth's PodWait).
	ReasonPodSandboxNotReady = "PodSandboxNotReady"
	// ReasonRestartAllContainersStarted: AllContainersRestarting is True.
	ReasonRestartAllContainersStarted = "RestartAllContainersStarted"

	msgRestartAllContainersStarted = "container exited with restart policy rule"

	// Upstream's message formats (upstream_test.go pins them): unknown
	// containers, then the incomplete (Initialized) or unready
	// (ContainersReady, Ready) ones; the readiness gates' (Ready).
	msgUnknownStatus    = "containers with unknown status: %s"
	msgIncompleteStatus = "containers with incomplete status: %s"
	msgUnreadyStatus    = "containers with unready status: %s"
	msgGateMissing      = "corresponding condition of pod readiness gate %q does not exist."
	msgGateNotTrue      = "the status of pod readiness gate %q is not \"True\", but %v"
)

// conditions returns the pod's conditions: the ones other controllers own
// (from the pod), the resize conditions (from the Input),
// DisruptionTarget (from the previous status), then
// PodReadyToStartContainers, Initialized, Ready, ContainersReady,
// PodScheduled and, for a pod that can restart all its containers,
// AllContainersRestarting. A condition whose status did not change keeps
// its previous lastTransitionTime; the others take Now.
func conditions(in *Input, old *corev1.PodStatus, all []corev1.ContainerStatus, p corev1.PodPhase) []corev1.PodCondition {
	pod := in.Pod
	var out []corev1.PodCondition
	for _, c := range pod.Status.Conditions {
		// The generator computes the kubelet's own conditions and takes
		// DisruptionTarget from its previous status; others are carried over.
		if !podutil.OwnedByKubelet(c.Type) && !podutil.SharedWithKubelet(c.Type) {
			out = append(out, *c.DeepCopy())
		}
	}
	out = append(out, resizeConditions(in)...)
	if c := findCondition(old.Conditions, corev1.DisruptionTarget); c != nil {
		out = append(out, *c.DeepCopy())
	}

	generated := []corev1.PodCondition{
		readyToStartContainers(in),
		initialized(pod, all, p),
	}
	// Readiness gates may name any condition listed so far.
	soFar := make([]corev1.PodCondition, 0, len(out)+len(generated))
	soFar = append(append(soFar, out...), generated...)
	generated = append(generated,
		podReady(pod, soFar, all, p),
		containersReady(pod, all, p),
		corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
	)
	for i := range generated {
		generated[i].ObservedGeneration = pod.Generation
	}
	if podutil.CanRestartAll(&pod.Spec) {
		// Upstream generates it without an observed generation.
		generated = append(generated, allContainersRestarting(in.RestartAll, p))
	}
	for i := range generated {
		c := &generated[i]
		c.LastTransitionTime = metav1.NewTime(in.Now)
		if prev := findCondition(old.Conditions, c.Type); prev != nil && prev.Status == c.Status {
			c.LastTransitionTime = prev.LastTransitionTime
		}
	}
	return append(out, generated...)
}

// resizeConditions are the Input's resize conditions in upstream's
// order, PodResizePending then PodResizeInProgress (the first of each
// type), none for a terminal pod (upstream determinePodResizeStatus). Those
// in the API's or the previous status are not carried over: the kubelet
// owns them, so one its owner dropped is gone. Their observed generation
// is their own, cleared for a pod without a generation, as upstream.
func resizeConditions(in *Input) []corev1.PodCondition {
	if in.Terminal {
		return nil
	}
	var out []corev1.PodCondition
	for _, t := range []corev1.PodConditionType{corev1.PodResizePending, corev1.PodResizeInProgress} {
		c := findCondition(in.Resize, t)
		if c == nil {
			continue
		}
		cp := *c.DeepCopy()
		if in.Pod.Generation == 0 {
			cp.ObservedGeneration = 0
		}
		out = append(out, cp)
	}
	return out
}

// allContainersRestarting is upstream's
// GenerateAllContainersRestartingCondition: True while the plan resets the
// pod's containers; False once they are all removed, when no restart is
// under way, and (with the phase's reason) once the pod is terminal.
func allContainersRestarting(r podplan.RestartAll, p corev1.PodPhase) corev1.PodCondition {
	c := corev1.PodCondition{Type: corev1.AllContainersRestarting, Status: corev1.ConditionFalse}
	switch {
	case p == corev1.PodSucceeded:
		c.Reason = ReasonPodCompleted
	case p == corev1.PodFailed:
		c.Reason = ReasonPodFailed
	case r == podplan.RestartAllResetting:
		c.Status, c.Reason, c.Message = corev1.ConditionTrue, ReasonRestartAllContainersStarted, msgRestartAllContainersStarted
	}
	return c
}

func findCondition(cs []corev1.PodCondition, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range cs {
		if cs[i].Type == t {
			return &cs[i]
		}
	}
	return nil
}

func boolCondition(t corev1.PodConditionType, ok bool) corev1.PodCondition {
	c := corev1.PodCondition{Type: t, Status: corev1.ConditionFalse}
	if ok {
		c.Status = corev1.ConditionTrue
	}
	return c
}

// notReady returns a condition of type t, False, with the upstream
// "containers with unknown status: [..], containers with <bad> status: [..]"
// message (badFormat: msgIncompleteStatus or msgUnreadyStatus), or nil
// when both lists are empty.
func notReady(t corev1.PodConditionType, reason, badFormat string, unknown, bad []string) *corev1.PodCondition {
	var msgs []string
	if len(unknown) > 0 {
		msgs = append(msgs, fmt.Sprintf(msgUnknownStatus, unknown))
	}
	if len(bad) > 0 {
		msgs = append(msgs, fmt.Sprintf(badFormat, bad))
	}
	if len(msgs) == 0 {
		return nil
	}
	return &corev1.PodCondition{Type: t, Status: corev1.ConditionFalse, Reason: reason, Message: strings.Join(msgs, ", ")}
}

// initialized is upstream GeneratePodInitializedCondition.
func initialized(pod *corev1.Pod, all []corev1.ContainerStatus, p corev1.PodPhase) corev1.PodCondition {
	var unknown, incomplete []string
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		s, ok := statusByName(all, c.Name)
		switch {
		case !ok:
			unknown = append(unknown, c.Name)
		case podutil.IsSidecar(c) && (s.Started == nil || !*s.Started):
			incomplete = append(incomplete, c.Name)
		case !podutil.IsSidecar(c) && !s.Ready:
			incomplete = append(incomplete, c.Name)
		}
	}
	if p == corev1.PodSucceeded && len(unknown) == 0 {
		return corev1.PodCondition{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, Reason: ReasonPodCompleted}
	}
	if anyRegularContainerStarted(pod, all) {
		// Initialized before; sidecars may be restarting.
		return boolCondition(corev1.PodInitialized, true)
	}
	if c := notReady(corev1.PodInitialized, ReasonContainersNotInitialized, msgIncompleteStatus, unknown, incomplete); c != nil {
		return *c
	}
	return boolCondition(corev1.PodInitialized, true)
}

func anyRegularContainerStarted(pod *corev1.Pod, all []corev1.ContainerStatus) bool {
	for i := range pod.Spec.Containers {
		s, ok := statusByName(all, pod.Spec.Containers[i].Name)
		if ok && (s.State.Running != nil || s.State.Terminated != nil) {
			return true
		}
	}
	return false
}

// containersReady is upstream GenerateContainersReadyCondition: sidecars
// and regular containers must all be ready.
func containersReady(pod *corev1.Pod, all []corev1.ContainerStatus, p corev1.PodPhase) corev1.PodCondition {
	var unknown, unready []string
	check := func(name string) {
		s, ok := statusByName(all, name)
		switch {
		case !ok:
			unknown = append(unknown, name)
		case !s.Ready:
			unready = append(unready, name)
		}
	}
	for i := range pod.Spec.InitContainers {
		if podutil.IsSidecar(&pod.Spec.InitContainers[i]) {
			check(pod.Spec.InitContainers[i].Name)
		}
	}
	for i := range pod.Spec.Containers {
		check(pod.Spec.Containers[i].Name)
	}
	switch {
	case p == corev1.PodSucceeded && len(unknown) == 0:
		return corev1.PodCondition{Type: corev1.ContainersReady, Status: corev1.ConditionFalse, Reason: ReasonPodCompleted}
	case p == corev1.PodFailed:
		return corev1.PodCondition{Type: corev1.ContainersReady, Status: corev1.ConditionFalse, Reason: ReasonPodFailed}
	}
	if c := notReady(corev1.ContainersReady, ReasonContainersNotReady, msgUnreadyStatus, unknown, unready); c != nil {
		return *c
	}
	return boolCondition(corev1.ContainersReady, true)
}

// podReady is upstream GeneratePodReadyCondition: ContainersReady, then
// every readiness gate's condition must be True.
func podReady(pod *corev1.Pod, conds []corev1.PodCondition, all []corev1.ContainerStatus, p corev1.PodPhase) corev1.PodCondition {
	cr := containersReady(pod, all, p)
	if cr.Status != corev1.ConditionTrue {
		return corev1.PodCondition{Type: corev1.PodReady, Status: cr.Status, Reason: cr.Reason, Message: cr.Message}
	}
	var msgs []string
	for _, g := range pod.Spec.ReadinessGates {
		c := findCondition(conds, g.ConditionType)
		switch {
		case c == nil:
			msgs = append(msgs, fmt.Sprintf(msgGateMissing, string(g.ConditionType)))
		case c.Status != corev1.ConditionTrue:
			msgs = append(msgs, fmt.Sprintf(msgGateNotTrue, string(g.ConditionType), c.Status))
		}
	}
	if len(msgs) > 0 {
		return corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: ReasonReadinessGatesNotReady, Message: strings.Join(msgs, ", ")}
	}
	return boolCondition(corev1.PodReady, true)
}

// NeedsReadinessReconcile reports whether the pod, as the API server has
// it, shows a Ready condition that its readiness gates contradict (upstream
// NeedToReconcilePodReadiness): another controller changed a gate's
// condition, so the pod must be synced again for Ready to follow. Pods
// without readiness gates, or without a Ready condition yet, never need it.
// Call it on status-only updates (RECONCILE) from the API source.
func NeedsReadinessReconcile(pod *corev1.Pod) bool {
	if len(pod.Spec.ReadinessGates) == 0 {
		return false
	}
	cur := findCondition(pod.Status.Conditions, corev1.PodReady)
	if cur == nil {
		return false
	}
	all := make([]corev1.ContainerStatus, 0, len(pod.Status.InitContainerStatuses)+len(pod.Status.ContainerStatuses))
	all = append(append(all, pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...)
	want := podReady(pod, pod.Status.Conditions, all, pod.Status.Phase)
	return cur.Status != want.Status || cur.Message != want.Message
}
