package podstatus

import (
	"fmt"
	"strings"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/pod/podplan"
)

// MaxWaitMessage bounds the message of a PodWait as berth writes it after
// upstream's on PodReadyToStartContainers: one line of at most this many
// bytes (the count of failures in a row is added after it).
const MaxWaitMessage = 256

// PodWait is why the pod's last sync stopped before its sandbox was ready
// to start containers, as that sync found it: a volume or a resource
// claim not ready, or the sandbox's creation or its network set-up
// failing. The syncer records it (internal/pod/podsync: from the volume
// manager, the DRA manager and kuberuntime.Result.Sandbox) and hands it
// to every status it generates until a sync gets past that step.
type PodWait struct {
	// Reason is short CamelCase (docs/why-waiting.md lists them); it
	// follows upstream's message, not in the condition's reason, which
	// stays upstream's PodSandboxNotReady.
	Reason string
	// Message says which step, which object and why; Generate makes it
	// one line and bounds it (MaxWaitMessage).
	Message string
	// Failures counts the syncs in a row that stopped with this reason
	// (1 the first time).
	Failures int
}

// readyToStartContainers is upstream's
// GeneratePodReadyToStartContainersCondition: True when no new sandbox is
// needed (the planner's podplan.DecideSandbox: exactly one sandbox is
// ready, it is the newest, its network mode matches the pod and it has an
// IP unless it uses the host network), else False with upstream's reason
// PodSandboxNotReady and message (why a new sandbox is needed). Where
// berth knows more, what stopped the last sync before the sandbox
// (in.Wait: a volume, the claims, the sandbox's creation or network
// failing), it follows upstream's text:
//
//	no pod sandbox exists; VolumeNotReady: volume "data" is not ready: ... (3 times in a row)
func readyToStartContainers(in *Input) corev1.PodCondition {
	v := podplan.DecideSandbox(in.Pod, in.Runtime)
	if !v.Create() {
		return boolCondition(corev1.PodReadyToStartContainers, true)
	}
	c := corev1.PodCondition{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionFalse,
		Reason: ReasonPodSandboxNotReady, Message: v.Why}
	if w := in.Wait; w != nil && w.Reason != "" {
		c.Message += "; " + w.Reason + ": " + oneLine(w.Message)
		if w.Failures > 1 {
			c.Message += fmt.Sprintf(" (%d times in a row)", w.Failures)
		}
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
