package podplan

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/runtimestate"
)

// initStep is how far initialization got in the current sandbox.
type initStep struct {
	done bool
	// next is the init container to start, or -1 to wait for one that runs.
	next int
	// failed is next's latest instance when it failed (exited non-zero,
	// OOM-killed or in an unknown state).
	failed *runtimestate.Container
}

// initProgress walks the init containers in order, looking only at
// instances in the current sandbox (sandboxID): unlike upstream, berth can
// tell the instances of a previous sandbox apart, so a re-created sandbox
// runs its init containers again without purging the old ones first.
//
// The first init container whose latest instance did not exit 0 is the one
// to act on: none yet or created-but-never-started (upstream creates a new
// one then) → start it; running → wait; failed → restart or fail the pod.
// Initialization is also done when any regular container already has an
// instance in this sandbox (its init containers may have been removed since).
//
// Restartable ("sidecar") init containers, restartPolicy: Always on an init
// container, are not handled yet: they are treated as ordinary init
// containers, so a sidecar that never exits holds the pod in initialization.
func (p *planner) initProgress(sandboxID string) initStep {
	init := p.pod.Spec.InitContainers
	if len(init) == 0 || p.anyRegularIn(sandboxID) {
		return initStep{done: true, next: -1}
	}
	for i := range init {
		inst := latestIn(p.rt, init[i].Name, sandboxID)
		switch {
		case inst == nil, inst.State == runtimestate.ContainerCreated:
			return initStep{next: i}
		case inst.State == runtimestate.ContainerRunning:
			return initStep{next: -1}
		case initFailed(inst):
			return initStep{next: i, failed: inst}
		}
		// Exited 0: on to the next one.
	}
	return initStep{done: true, next: -1}
}

// planInit fills a while initialization is in progress: regular containers
// are not looked at.
func (p *planner) planInit(a *Actions, step initStep) wanted {
	none := wanted{init: -1}
	if step.next < 0 {
		return none
	}
	if step.failed != nil {
		if p.pod.Spec.RestartPolicy == corev1.RestartPolicyNever {
			a.KillPod = true
			return none
		}
		if step.failed.State == runtimestate.ContainerUnknown {
			p.kill(a, step.failed, KillReason{
				Reason:  KillReasonUnknown,
				Message: fmt.Sprintf("Init container is in %q state, try killing it before restart", step.failed.State),
			})
		}
	}
	return wanted{init: step.next}
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
