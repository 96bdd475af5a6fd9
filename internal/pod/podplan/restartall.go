package podplan

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/podkit/podutil"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// planRestartAll decides where the pod is in a RestartAllContainers
// restart and, while it is resetting, which containers to reset.
//
// A restart is under way when the previous status says so (restartingAll)
// or when the newest instance of an init or regular container exited with
// a code whose rule's action is RestartAllContainers (upstream's
// ShouldAllContainersRestart over the runtime status; berth does not look
// at the previous status's terminated containers as upstream does: the
// condition already carries what they would tell). While any instance of
// the pod's containers is left in the runtime it is resetting (every
// instance listed, upstream's getContainersToReset order); once none is,
// it is cleaned up (upstream's AllContainersRestartCleanedUp) and the pod
// starts over.
func (p *planner) planRestartAll(restartingAll bool) (RestartAll, []ResetContainer) {
	spec := &p.pod.Spec
	if !restartingAll && !p.restartAllTriggered() {
		return RestartAllNone, nil
	}
	initSources, initTargets := p.toReset(spec.InitContainers)
	sources, targets := p.toReset(spec.Containers)
	var reset []ResetContainer
	for _, group := range [][]ResetContainer{targets, initTargets, sources, initSources} {
		reset = append(reset, group...)
	}
	if len(reset) == 0 {
		return RestartAllCleanedUp, nil
	}
	return RestartAllResetting, reset
}

// restartAllTriggered reports whether the newest instance of an init or
// regular container exited with a code that restarts all containers.
func (p *planner) restartAllTriggered() bool {
	for _, cs := range [][]corev1.Container{p.pod.Spec.InitContainers, p.pod.Spec.Containers} {
		for i := range cs {
			c := p.rt.LatestContainer(cs[i].Name)
			if c != nil && c.State == runtimestate.ContainerExited && podutil.TriggersRestartAll(&cs[i], c.ExitCode) {
				return true
			}
		}
	}
	return false
}

// toReset lists every runtime instance of specs, in spec order and newest
// first: sources are the exited instances whose exit code restarts all
// containers, targets the others (those not exited are killed first).
func (p *planner) toReset(specs []corev1.Container) (sources, targets []ResetContainer) {
	for i := range specs {
		for _, c := range p.rt.ContainersNamed(specs[i].Name) {
			r := ResetContainer{ContainerRef: ContainerRef{ID: c.ID, Name: c.Name}}
			switch {
			case c.State != runtimestate.ContainerExited:
				r.Kill = true
				targets = append(targets, r)
			case podutil.TriggersRestartAll(&specs[i], c.ExitCode):
				sources = append(sources, r)
			default:
				targets = append(targets, r)
			}
		}
	}
	return sources, targets
}
