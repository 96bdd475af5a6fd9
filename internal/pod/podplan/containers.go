package podplan

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/podkit/podutil"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// planContainers fills a for regular containers once initialization is done.
//
// A container that is not running is started when ShouldContainerBeRestarted
// says so (an instance in an unknown state is killed first). A running
// container is killed when its spec hash changed (and always started again)
// or when its liveness or startup probe failed (started again per
// podutil.RestartsAfterKill); otherwise it is kept. When nothing is kept and
// nothing is to start, the pod is torn down (KillPod).
func (p *planner) planContainers(a *Actions) wanted {
	var w wanted
	keep := 0
	for idx := range p.pod.Spec.Containers {
		spec := &p.pod.Spec.Containers[idx]
		latest := p.rt.LatestContainer(spec.Name)
		if latest == nil || latest.State != runtimestate.ContainerRunning {
			if !ShouldContainerBeRestarted(p.pod, spec, latest) {
				continue
			}
			w.containers = append(w.containers, idx)
			if latest != nil && latest.State == runtimestate.ContainerUnknown {
				p.kill(a, latest, KillReason{
					Reason:  KillReasonUnknown,
					Message: fmt.Sprintf("Container is in %q state, try killing it before restart", latest.State),
				})
			}
			continue
		}

		reason, restart, kill := p.runningVerdict(spec, latest, p.hash[idx])
		if !kill {
			if p.resizeVerdict(a, spec, latest, false, idx) {
				w.containers = append(w.containers, idx)
				continue
			}
			keep++
			continue
		}
		if restart {
			reason.Message += ", will be restarted"
			w.containers = append(w.containers, idx)
		}
		p.kill(a, latest, reason)
	}
	if keep == 0 && len(w.containers) == 0 {
		a.KillPod = true
	}
	return w
}

// runningVerdict decides about a running container: kill it or not, and
// whether to start it again after the kill. The message lacks the
// ", will be restarted" suffix, which the caller adds.
func (p *planner) runningVerdict(spec *corev1.Container, c *runtimestate.Container, hash uint64) (r KillReason, restart, kill bool) {
	restart = podutil.RestartsAfterKill(spec, &p.pod.Spec)
	switch {
	case specChanged(c, spec, hash):
		// A changed spec restarts the container whatever the restart policy.
		return KillReason{Reason: KillReasonSpecChanged, Message: fmt.Sprintf("Container %s definition changed", spec.Name)}, true, true
	case p.probes.LivenessFailed[c.ID]:
		return KillReason{Reason: KillReasonLivenessProbe, Message: fmt.Sprintf("Container %s failed liveness probe", spec.Name)}, restart, true
	case p.probes.StartupFailed[c.ID]:
		return KillReason{Reason: KillReasonStartupProbe, Message: fmt.Sprintf("Container %s failed startup probe", spec.Name)}, restart, true
	}
	return KillReason{}, false, false
}

// ShouldContainerBeRestarted is upstream's ShouldContainerBeRestarted:
// whether a container that is not running is (re)started, given its latest
// instance (nil when it never ran or every instance was removed). Never once
// the pod is being deleted; a missing, created-but-never-started or unknown
// instance is always replaced; an exited one per
// podutil.ContainerShouldRestart (the container's restartPolicyRules, its
// restartPolicy, then the pod's). The planner decides with it, and the
// status generator asks it whether a start failure still applies: one
// answer for both.
func ShouldContainerBeRestarted(pod *corev1.Pod, spec *corev1.Container, latest *runtimestate.Container) bool {
	if pod.DeletionTimestamp != nil {
		return false
	}
	if latest == nil {
		return true
	}
	switch latest.State {
	case runtimestate.ContainerRunning:
		return false
	case runtimestate.ContainerExited:
		return podutil.ContainerShouldRestart(spec, &pod.Spec, latest.ExitCode)
	}
	return true
}

// kill records a container to stop.
func (p *planner) kill(a *Actions, c *runtimestate.Container, r KillReason) {
	if a.KillContainers == nil {
		a.KillContainers = map[ContainerRef]KillReason{}
	}
	a.KillContainers[ContainerRef{ID: c.ID, Name: c.Name}] = r
}

// startCreated fills a.StartCreated: of the init and regular containers
// the plan starts in the kept sandbox, those whose latest instance is
// there, created and never started, from the spec's hash as it is now.
// An instance created from another spec, in another sandbox or not yet
// known to be created is replaced as usual.
func (p *planner) startCreated(a *Actions) {
	if a.SandboxID == "" || a.CreateSandbox || a.KillPod {
		return
	}
	adopt := func(spec *corev1.Container, hash uint64) {
		latest := p.rt.LatestContainer(spec.Name)
		if latest == nil || latest.State != runtimestate.ContainerCreated ||
			latest.SandboxID != a.SandboxID || latest.Hash != hash {
			return
		}
		if a.StartCreated == nil {
			a.StartCreated = map[string]string{}
		}
		a.StartCreated[spec.Name] = latest.ID
	}
	for _, i := range a.InitContainers {
		adopt(&p.pod.Spec.InitContainers[i], p.initHash[i])
	}
	for _, i := range a.StartContainers {
		adopt(&p.pod.Spec.Containers[i], p.hash[i])
	}
}
