package podplan

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/podkit/podutil"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// planInit decides about the init containers in the current sandbox
// (upstream computeInitContainerActions) and reports whether the pod is
// initialized (its regular containers may run) and which init containers
// to start, ascending. Only instances in the current sandbox (sandboxID)
// count: unlike upstream, berth can tell the instances of a previous
// sandbox apart, so a re-created sandbox runs its init containers again
// without purging the old ones first. A regular container with an instance
// in this sandbox means the pod was initialized before (its init containers
// may have been removed since).
//
// The init containers are walked from the last one. The first one found
// with an instance (the frontier) is acted on:
//
//	created                  start it again
//	running ordinary         wait for it
//	running sidecar          wait until started (no startup probe, or
//	                         Probes.Started); then start the next one (or
//	                         the pod is initialized if it is the last);
//	                         a failed startup probe restarts it
//	exited 0 ordinary        start the next one, or initialized if last
//	failed ordinary          restart it; under restartPolicy Never the
//	                         pod is killed instead
//	exited sidecar           restart it (whatever the pod's policy)
//	unknown                  kill it and start it again (Never: kill pod)
//
// Every init container before the frontier (and all of them once the pod
// is initialized) is done: ordinary ones are left alone, sidecars are kept
// running: restarted when missing, exited or unknown, or when a startup or
// liveness probe failed or their spec changed. With no instance at all,
// the first init container is started.
func (p *planner) planInit(a *Actions, sandboxID string) (initialized bool, start []int) {
	init := p.pod.Spec.InitContainers
	if len(init) == 0 {
		return true, nil
	}
	initialized = p.anyRegularIn(sandboxID)
	behind := initialized // the init containers from here on are done
	for i := len(init) - 1; i >= 0; i-- {
		spec := &init[i]
		sidecar := podutil.IsSidecar(spec)
		inst := latestIn(p.rt, spec.Name, sandboxID)
		switch {
		case inst == nil:
			if behind && sidecar {
				start = append(start, i)
			}
			continue
		case behind && !sidecar:
			continue
		case sidecar:
			restart, started := p.sidecarVerdict(a, spec, inst, i)
			if restart {
				start = append(start, i)
			}
			if started && !behind {
				if i == len(init)-1 {
					initialized = true
				} else {
					start = append(start, i+1)
				}
			}
		default:
			next, killPod := p.initVerdict(a, spec, inst, i)
			if killPod {
				a.KillPod = true
				return false, nil
			}
			if next == len(init) {
				initialized = true
			} else if next >= 0 {
				start = append(start, next)
			}
		}
		behind = true
	}
	if !behind {
		start = append(start, 0)
	}
	slices.Reverse(start)
	return initialized, start
}

// initVerdict decides about the frontier's instance when it is an ordinary
// init container at index i: the init container to start (i to restart
// it, i+1 for the next one, len for "initialization done", -1 to wait), or
// killPod when it failed and will not be restarted. A failed instance is
// restarted per podutil.ContainerShouldRestart (its restartPolicyRules, its
// restartPolicy, the pod's); one in an unknown state has no exit code, so
// only the restart policies count (podutil.RestartsAfterKill), as upstream.
func (p *planner) initVerdict(a *Actions, spec *corev1.Container, inst *runtimestate.Container, i int) (next int, killPod bool) {
	switch inst.State {
	case runtimestate.ContainerCreated:
		return i, false
	case runtimestate.ContainerRunning:
		// Resized in place while it runs (InPlacePodVerticalScalingInitContainers,
		// GA in v1.37); never restarted for it: validation allows it no
		// RestartContainer policy.
		p.resizeInPlace(a, spec, inst, i)
		return -1, false
	case runtimestate.ContainerExited:
		if !initFailed(inst) {
			return i + 1, false
		}
		if !podutil.ContainerShouldRestart(spec, &p.pod.Spec, inst.ExitCode) {
			return -1, true
		}
		return i, false
	}
	if !podutil.RestartsAfterKill(spec, &p.pod.Spec) {
		return -1, true
	}
	p.kill(a, inst, KillReason{
		Reason:  KillReasonUnknown,
		Message: fmt.Sprintf("Init container is in %q state, try killing it before restart", inst.State),
	})
	return i, false
}

// sidecarVerdict decides about a sidecar's latest instance: whether to
// (re)start it (killing the running instance first when needed) and
// whether it has started, so that the next init container may start.
func (p *planner) sidecarVerdict(a *Actions, spec *corev1.Container, inst *runtimestate.Container, i int) (restart, started bool) {
	switch inst.State {
	case runtimestate.ContainerCreated, runtimestate.ContainerExited:
		return true, false
	case runtimestate.ContainerRunning:
	default:
		p.kill(a, inst, KillReason{
			Reason:  KillReasonUnknown,
			Message: fmt.Sprintf("Init container is in %q state, try killing it before restart", inst.State),
		})
		return true, false
	}
	if spec.StartupProbe != nil && !p.probes.Started[inst.ID] {
		if p.probes.StartupFailed[inst.ID] {
			p.kill(a, inst, KillReason{Reason: KillReasonStartupProbe, Message: fmt.Sprintf("Init container %s failed startup probe", spec.Name)})
			return true, false
		}
		return false, false
	}
	switch {
	case specChanged(inst, spec, p.initHash[i]):
		p.kill(a, inst, KillReason{Reason: KillReasonSpecChanged, Message: fmt.Sprintf("Init container %s definition changed", spec.Name)})
		return true, true
	case p.probes.LivenessFailed[inst.ID]:
		p.kill(a, inst, KillReason{Reason: KillReasonLivenessProbe, Message: fmt.Sprintf("Init container %s failed liveness probe", spec.Name)})
		return true, true
	}
	return p.resizeVerdict(a, spec, inst, true, i), true
}

// initFailed reports whether an init container instance failed: it exited
// non-zero, was OOM-killed, or is in an unknown state.
func initFailed(c *runtimestate.Container) bool {
	switch c.State {
	case runtimestate.ContainerUnknown:
		return true
	case runtimestate.ContainerExited:
		return c.ExitCode != 0 || c.Reason == "OOMKilled"
	}
	return false
}

// anyRegularIn reports whether a regular container has an instance in the
// given sandbox.
func (p *planner) anyRegularIn(sandboxID string) bool {
	for i := range p.pod.Spec.Containers {
		if latestIn(p.rt, p.pod.Spec.Containers[i].Name, sandboxID) != nil {
			return true
		}
	}
	return false
}

// latestIn returns the newest instance of the named container in the given
// sandbox, or nil.
func latestIn(rt *runtimestate.Pod, name, sandboxID string) *runtimestate.Container {
	for i := range rt.Containers {
		c := &rt.Containers[i]
		if c.Name == name && c.SandboxID == sandboxID {
			return c
		}
	}
	return nil
}
