package podstatus

import (
	"fmt"
	"strings"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/pod/podplan"
)

// MaxWaitMessage bounds the message berth writes on a condition it gives
// its own reason: one line of at most this many bytes (the count of
// failures in a row is added after it).
const MaxWaitMessage = 256

// PodWait is why the pod's last sync stopped before its sandbox was ready
// to start containers, as that sync found it: a volume or a resource
// claim not ready, or the sandbox's creation or its network set-up
// failing. The syncer records it (internal/pod/podsync: from the volume
// manager, the DRA manager and kuberuntime.Result.Sandbox) and hands it
// to every status it generates until a sync gets past that step.
type PodWait struct {
	// Reason is short CamelCase (docs/why-waiting.md lists them).
	Reason string
	// Message says which step, which object and why; Generate makes it
	// one line and bounds it (MaxWaitMessage).
	Message string
	// Failures counts the syncs in a row that stopped with this reason
	// (1 the first time).
	Failures int
}

// readyToStartContainers is True when no new sandbox is needed (the
// planner's podplan.DecideSandbox: exactly one sandbox is ready, it is the
// newest, its network mode matches the pod and it has an IP unless it uses
// the host network). False carries berth's reason, where upstream has
// none: the phase's for a pod that is done, else what stopped the last
// sync (in.Wait), else why the planner creates a sandbox.
func readyToStartContainers(in *Input, p corev1.PodPhase) corev1.PodCondition {
	v := podplan.DecideSandbox(in.Pod, in.Runtime)
	c := boolCondition(corev1.PodReadyToStartContainers, !v.Create())
	if !v.Create() {
		return c
	}
	switch {
	case p == corev1.PodSucceeded:
		c.Reason = ReasonPodCompleted
	case p == corev1.PodFailed:
		c.Reason = ReasonPodFailed
	case in.Wait != nil && in.Wait.Reason != "":
		c.Reason, c.Message = in.Wait.Reason, oneLine(in.Wait.Message)
		if in.Wait.Failures > 1 {
			c.Message += fmt.Sprintf(" (%d times in a row)", in.Wait.Failures)
		}
	default:
		c.Reason, c.Message = v.Reason, oneLine(v.Message)
	}
	return c
}

// oneLine folds s onto one line (every run of white space becomes one
// space) and cuts it to MaxWaitMessage bytes on a rune boundary, marking
// the cut with "...".
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= MaxWaitMessage {
		return s
	}
	cut := MaxWaitMessage - len("...")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
