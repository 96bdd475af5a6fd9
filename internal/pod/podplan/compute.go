package podplan

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/podkit/podutil"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// Upstream's default CrashLoopBackOff limits.
const (
	DefaultBackoffInitial = 10 * time.Second
	DefaultBackoffMax     = 300 * time.Second
)

// Compute decides what to do with a pod that is syncing (wanted running).
// Terminating a pod is not its business. It is pure: it reads only in and
// does not modify anything in reaches (in.Backoff included).
//
// First activeDeadlineSeconds (deadline.go): past it, the pod fails and
// nothing else is planned. Then the decision, in order:
//
//  0. RestartAllContainers (restartall.go): while a restart is under way
//     and containers of the pod are left, reset them and plan nothing else;
//     once none is left, go on: the pod starts over like a new one in its
//     sandbox.
//  1. Sandbox (sandbox.go): create a new one when there is none, more than
//     one is ready, the latest is not ready, its network mode differs from
//     spec.hostNetwork or a pod-network sandbox has no IP. A re-created pod
//     starts from scratch: first init container, else every container
//     (except, under OnFailure, those that already succeeded). A Never pod
//     that already ran containers gets no new sandbox.
//  2. Init containers (init.go), in the kept sandbox: one at a time, in
//     order; a failure kills the pod under Never and restarts the init
//     container otherwise. Sidecars (restartable init containers) must
//     have started before the next init container starts and are kept
//     running (restarted whenever they exit) during and after
//     initialization.
//  3. Regular containers (containers.go), once initialization is done:
//     start the missing and restartable ones, kill and restart those whose
//     spec changed or whose liveness/startup probe failed; tear the pod down
//     when nothing would run any more (sidecars do not count: they are
//     stopped with the pod).
//  4. Backoff (backoff.go): every start of a container whose previous
//     instance exited passes the CrashLoopBackOff gate; held-back
//     containers land in Waiting.
//  5. Ephemeral containers (ephemeral.go), in a kept sandbox whose pod is
//     not torn down: each one that never ran starts once (whether or not
//     the pod is initialized), after its target, if it names one, runs.
func Compute(in Inputs) Actions {
	p := newPlanner(in)
	var a Actions

	a.Deadline = decideDeadline(in.Pod, in.StartTime, in.PreviousPhase, in.Now)
	if a.Deadline.Exceeded {
		if len(p.backoff) > 0 {
			a.Backoff = p.backoff
		}
		return a
	}
	a.RestartAll, a.Reset = p.planRestartAll(in.RestartingAll)
	if a.RestartAll == RestartAllResetting {
		if len(p.backoff) > 0 {
			a.Backoff = p.backoff
		}
		return a
	}
	sb := DecideSandbox(in.Pod, in.Runtime)
	var w wanted
	if sb.Create() {
		w = p.planNewSandbox(&a, sb)
	} else {
		a.Attempt = sb.Current.Attempt
		w = p.planExistingSandbox(&a, sb.Current)
	}

	for _, idx := range w.init {
		if p.admit(&in.Pod.Spec.InitContainers[idx], p.initHash[idx]) {
			a.InitContainers = append(a.InitContainers, idx)
		}
	}
	for _, idx := range w.containers {
		if p.admit(&in.Pod.Spec.Containers[idx], p.hash[idx]) {
			a.StartContainers = append(a.StartContainers, idx)
		}
	}
	if !sb.Create() && !a.KillPod {
		p.planEphemeral(&a, sb.Current.ID)
	}
	if a.KillPod && !a.CreateSandbox {
		a.Resize = Resize{}
	} else {
		p.finishResize(&a)
	}
	if sb.Current != nil && !a.KillPod && (len(a.InitContainers) > 0 || len(a.StartContainers) > 0 || len(a.EphemeralContainers) > 0) {
		a.SandboxID = sb.Current.ID
	}
	p.startCreated(&a)
	if len(p.waiting) > 0 {
		a.Waiting = p.waiting
	}
	if len(p.backoff) > 0 {
		a.Backoff = p.backoff
	}
	return a
}

// wanted is what the plan would start before the backoff gate.
type wanted struct {
	init       []int // indices into Spec.InitContainers, ascending
	containers []int
}

// planner carries one Compute call's derived inputs. It is created and
// discarded by Compute; nothing outlives the call.
type planner struct {
	pod      *corev1.Pod
	rt       *runtimestate.Pod
	probes   ProbeSnapshot
	now      time.Time
	policy   BackoffPolicy
	hash     []uint64 // HashContainer of Spec.Containers[i]
	initHash []uint64 // HashContainer of Spec.InitContainers[i]
	// backoff is a private copy of in.Backoff, garbage-collected and then
	// advanced by admit; it becomes Actions.Backoff.
	backoff map[string]BackoffEntry
	waiting map[string]Waiting
	// actuatedRes and actuatedPod are in.Actuated and in.ActuatedPod.
	actuatedRes map[string]corev1.ResourceRequirements
	actuatedPod *corev1.ResourceRequirements
}

func newPlanner(in Inputs) *planner {
	rt := in.Runtime
	if rt == nil {
		rt = &runtimestate.Pod{}
	}
	p := &planner{
		pod:     in.Pod,
		rt:      rt,
		probes:  in.Probes,
		now:     in.Now,
		policy:  in.Policy.withDefaults(),
		waiting: map[string]Waiting{},

		actuatedRes: in.Actuated,
		actuatedPod: in.ActuatedPod,
	}
	spec := &in.Pod.Spec
	p.hash = make([]uint64, len(spec.Containers))
	for i := range spec.Containers {
		p.hash[i] = HashContainer(&spec.Containers[i])
	}
	p.initHash = make([]uint64, len(spec.InitContainers))
	for i := range spec.InitContainers {
		p.initHash[i] = HashContainer(&spec.InitContainers[i])
	}
	p.backoff = p.collectBackoff(in.Backoff)
	return p
}

// planNewSandbox fills a for a pod whose sandbox must be (re)created.
func (p *planner) planNewSandbox(a *Actions, sb SandboxVerdict) wanted {
	var none wanted
	// Whatever the runtime holds goes: running containers are stopped, and
	// a dead sandbox is stopped too so its network is released.
	a.KillPod = len(p.rt.Sandboxes) > 0 || len(p.rt.Containers) > 0
	a.CreateSandbox = true
	a.Attempt = sb.Attempt

	// A Never pod whose containers already ran is done: no new sandbox.
	if p.pod.Spec.RestartPolicy == corev1.RestartPolicyNever && sb.Attempt != 0 && len(p.rt.Containers) != 0 {
		a.CreateSandbox = false
		return none
	}
	var start []int
	for idx := range p.pod.Spec.Containers {
		c := &p.pod.Spec.Containers[idx]
		if podutil.RunsOnce(c, &p.pod.Spec) && succeeded(p.rt.LatestContainer(c.Name)) {
			continue
		}
		start = append(start, idx)
	}
	// Nothing left to run (OnFailure, every container succeeded): the
	// containers exist, so initialization was done; no new sandbox.
	if len(start) == 0 {
		a.CreateSandbox = false
		return none
	}
	if len(p.pod.Spec.InitContainers) > 0 {
		return wanted{init: []int{0}}
	}
	return wanted{containers: start}
}

// planExistingSandbox fills a for a pod whose latest sandbox is kept.
func (p *planner) planExistingSandbox(a *Actions, sb *runtimestate.Sandbox) wanted {
	initialized, init := p.planInit(a, sb.ID)
	if a.KillPod || !initialized {
		return wanted{init: init}
	}
	w := p.planContainers(a)
	if a.KillPod {
		// Every regular container is done: the pod completes and its
		// sidecars are not restarted (the pod kill stops them).
		return wanted{}
	}
	w.init = init
	return w
}

// succeeded reports whether c exited with code 0.
func succeeded(c *runtimestate.Container) bool {
	return c != nil && c.State == runtimestate.ContainerExited && c.ExitCode == 0
}

// podRef formats a pod as upstream's format.Pod does: name_namespace(uid).
func podRef(pod *corev1.Pod) string {
	return fmt.Sprintf("%s_%s(%s)", pod.Name, pod.Namespace, pod.UID)
}
