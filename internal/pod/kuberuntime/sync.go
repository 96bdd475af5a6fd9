package kuberuntime

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"

	"github.com/berthk8s/berth/internal/node/userns"
	"github.com/berthk8s/berth/internal/pod/containerconfig"
	"github.com/berthk8s/berth/internal/pod/podplan"
	"github.com/berthk8s/berth/internal/pod/timeline"
	"github.com/berthk8s/berth/internal/podkit/podutil"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// Result is what one Apply achieved beyond its error.
type Result struct {
	// Failures says, by container name, why a container the plan starts
	// did not start: ErrImagePull, ImagePullBackOff, ErrImageNeverPull,
	// InvalidImageName, CreateContainerConfigError, CreateContainerError,
	// RunContainerError. (The plan's own waiting reasons, such as
	// CrashLoopBackOff, are the plan's; Apply only records their events.)
	// The pod status shows them as waiting reasons. Never nil.
	Failures map[string]runtimestate.StartFailure
	// Pulls is the pod's image pull back-off after this apply; the caller
	// keeps it and hands it to the next Apply. Never nil.
	Pulls PullBackoffs
	// Actuated are the containers (init and regular) this apply started
	// or resized in place, with the resources they now run with (their
	// spec's); PodActuated says the pod cgroup now has the pod's
	// (internal/pod/allocation records both).
	Actuated    map[string]corev1.ResourceRequirements
	PodActuated bool
	// ResizeErr is why the plan's in-place resize stopped, if it did; the
	// rest of the plan was performed. The pod's PodResizeInProgress
	// condition reports it (reason Error).
	ResizeErr error
	// Sandbox is why the plan's new sandbox was not created, when it was
	// not (ReasonSandboxCreateFailed, ReasonNetworkSetupFailed; the
	// message is the runtime's, on one line), nil otherwise; the error
	// says so too. The pod's PodReadyToStartContainers condition shows it.
	Sandbox *runtimestate.StartFailure
}

// ApplyOptions is what Apply needs besides the pod, its runtime state and
// its plan.
type ApplyOptions struct {
	// Volumes maps each of the pod's volumes to its host directory, as
	// the volume manager set them up. A volumeMount of a volume missing
	// here fails the container with CreateContainerConfigError.
	Volumes map[string]string
	// Relabel names the volumes whose mounts the runtime relabels for
	// SELinux (the volume manager's RelabeledVolumes).
	Relabel map[string]bool
	// ExtraGroups are the supplemental groups the pod's volumes add (the
	// volume manager's SupplementalGroups), for the sandbox and every
	// container.
	ExtraGroups []int64
	// Pulls is the pod's image pull back-off as the previous Apply
	// returned it (nil at first). Apply does not modify it.
	Pulls PullBackoffs
	// Actuated is the pod as it last ran: with the resources berth last
	// set on its containers and pod cgroup (internal/pod/allocation), which
	// an in-place resize starts from. Nil when the plan resizes nothing.
	Actuated *corev1.Pod
	// FirstSeen is when berth first saw the pod: of the new pods waiting
	// to start (start_pace.go), the one seen first goes first. Zero is the
	// time Apply asks.
	FirstSeen time.Time
}

// Apply performs the pod's plan, computed by the caller with podplan.Compute
// over the same runtime state rt, in order: a RestartAllContainers reset
// (kill and remove the containers the plan's Reset names, and nothing
// else); else kill the pod (containers then
// sandboxes) or the containers the plan names, create the sandbox, start the
// ephemeral containers the plan names, the init containers it names
// (the next ordinary one and sidecars), then the regular containers. It
// decides nothing: what to start, kill or hold back is the plan's.
//
// Containers that cannot start are reported in Result.Failures, not as an
// error; the error reports what stops the apply itself (killing, creating
// the sandbox). The Result is valid even when err is not nil.
//
// An apply that creates the sandbox of a pod with its own user namespace
// is counted by Config.Observe.UserNamespacedPodStarted, failed when anything in
// it failed, as upstream's SyncPod counts it.
func (m *Manager) Apply(ctx context.Context, pod *corev1.Pod, rt *runtimestate.Pod, actions podplan.Actions, opts ApplyOptions) (Result, error) {
	res, err := m.apply(ctx, pod, rt, actions, opts)
	if m.cfg.Observe.UserNamespacedPodStarted != nil && actions.CreateSandbox && len(actions.Reset) == 0 && userns.WantsUserNamespace(pod) {
		m.cfg.Observe.UserNamespacedPodStarted(err != nil || len(res.Failures) > 0)
	}
	return res, err
}

func (m *Manager) apply(ctx context.Context, pod *corev1.Pod, rt *runtimestate.Pod, actions podplan.Actions, opts ApplyOptions) (Result, error) {
	logger := klog.FromContext(ctx).WithValues("pod", klog.KObj(pod), "podUID", pod.UID)
	ctx = klog.NewContext(ctx, logger)
	res := Result{Failures: map[string]runtimestate.StartFailure{}, Pulls: opts.Pulls.clone()}
	m.waitingEvents(pod, actions.Waiting)
	if len(actions.Reset) > 0 {
		return res, m.resetContainers(ctx, pod, rt, actions.Reset)
	}
	if actions.CreateSandbox && rt.LatestSandbox() != nil {
		m.cfg.Recorder.Eventf(pod, corev1.EventTypeNormal, eventSandboxChanged, "Pod sandbox changed, it will be killed and re-created.")
	}
	if actions.KillPod {
		if err := m.KillPod(ctx, pod, rt, nil); err != nil {
			return res, fmt.Errorf("kill pod: %w", err)
		}
	} else if err := m.killContainers(ctx, pod, rt, actions.KillContainers); err != nil {
		return res, err
	}

	if r := actions.Resize; r.PodCgroup || len(r.Containers) > 0 {
		from := opts.Actuated
		if from == nil {
			from = pod
		}
		if err := m.actuateResize(ctx, pod, from, r, &res); err != nil {
			logger.Error(err, "Pod resize failed")
			res.ResizeErr = err
		}
	}

	sandboxID, attempt := actions.SandboxID, sandboxAttempt(rt, actions)
	if !actions.CreateSandbox && (sandboxID == "" || (len(actions.InitContainers) == 0 && len(actions.StartContainers) == 0 && len(actions.EphemeralContainers) == 0)) {
		return res, nil
	}
	if actions.CreateSandbox {
		// Only a new sandbox waits for a slot: the containers of a ready
		// one start at once.
		done, err := m.awaitStartSlot(ctx, opts.FirstSeen)
		if err != nil {
			return res, err
		}
		defer done()
	}
	if err := m.ensurePodCgroup(ctx, pod); err != nil {
		if actions.CreateSandbox {
			res.Sandbox = &runtimestate.StartFailure{Reason: ReasonSandboxCreateFailed, Message: "creating the pod cgroup failed: " + err.Error()}
		}
		return res, err
	}

	sandboxCfg, ns, err := m.sandboxConfig(ctx, pod, attempt, opts.ExtraGroups)
	if err == nil && actions.CreateSandbox {
		logger.V(2).Info("Creating pod sandbox", "attempt", attempt)
		end := m.beginTimedStage(ctx, pod, timeline.StageSandbox, "", startSandbox)
		sandboxID, err = m.createSandbox(ctx, sandboxCfg)
		end(0, "", err)
	}
	if err != nil {
		m.cfg.Recorder.Eventf(pod, corev1.EventTypeWarning, eventFailedCreatePodSandBox, "Failed to create pod sandbox: %v", criMessage(err))
		if actions.CreateSandbox {
			f := sandboxFailure(err)
			res.Sandbox = &f
		}
		return res, fmt.Errorf("create pod sandbox: %w", err)
	}
	target := startTarget{Pod: pod, SandboxID: sandboxID, SandboxCfg: sandboxCfg, UserNamespace: ns, Runtime: rt, Volumes: opts.Volumes, Relabel: opts.Relabel, ExtraGroups: opts.ExtraGroups, Pulls: res.Pulls,
		PodIPs: m.sandboxIPs(ctx, pod, rt, sandboxID, actions.CreateSandbox)}
	m.startEphemeral(ctx, target, actions.EphemeralContainers, res.Failures)
	for _, i := range actions.InitContainers {
		if i < 0 || i >= len(pod.Spec.InitContainers) {
			continue
		}
		target.Container, target.Type, target.TargetID = &pod.Spec.InitContainers[i], containerconfig.TypeInit, ""
		target.CreatedID = actions.StartCreated[target.Container.Name]
		if f := m.startContainer(ctx, target); f != nil {
			res.Failures[target.Container.Name] = *f
			if podutil.IsSidecarIn(&pod.Spec, target.Container) {
				continue
			}
			// Regular containers wait for the init containers.
			return res, nil
		}
		res.actuate(target.Container)
	}
	for _, i := range actions.StartContainers {
		if i < 0 || i >= len(pod.Spec.Containers) {
			continue
		}
		target.Container, target.Type, target.TargetID = &pod.Spec.Containers[i], containerconfig.TypeRegular, ""
		target.CreatedID = actions.StartCreated[target.Container.Name]
		if f := m.startContainer(ctx, target); f != nil {
			res.Failures[target.Container.Name] = *f
			continue
		}
		res.actuate(target.Container)
	}
	return res, nil
}

// awaitStartSlot waits for the start slot of a new sandbox (start_pace.go)
// and returns the end of the start.
func (m *Manager) awaitStartSlot(ctx context.Context, firstSeen time.Time) (func(), error) {
	done, waited, err := m.starts.acquire(ctx, firstSeen)
	if err != nil {
		return nil, err
	}
	if waited > 0 {
		klog.FromContext(ctx).V(3).Info("Waited for a pod start slot", "wait", waited)
	}
	return done, nil
}

// startEphemeral starts the ephemeral containers the plan names, each in
// the PID namespace of the target the plan resolved, and records in
// failures those that did not start. They go first, as upstream's SyncPod
// step 7, so that an init container that cannot start does not hold them
// back.
func (m *Manager) startEphemeral(ctx context.Context, t startTarget, starts []podplan.EphemeralStart, failures map[string]runtimestate.StartFailure) {
	for _, e := range starts {
		if e.Index < 0 || e.Index >= len(t.Pod.Spec.EphemeralContainers) {
			continue
		}
		t.Container = podutil.EphemeralAsContainer(&t.Pod.Spec.EphemeralContainers[e.Index])
		t.Type, t.TargetID = containerconfig.TypeEphemeral, e.TargetID
		if f := m.startContainer(ctx, t); f != nil {
			failures[t.Container.Name] = *f
		}
	}
}

// waitingEvents records an event for each container the plan holds back:
// BackOff for a CrashLoopBackOff, else (an ephemeral container whose
// target does not run) Failed with the reason's message, as upstream's
// startContainer records its FailedToCreateContainer.
func (m *Manager) waitingEvents(pod *corev1.Pod, waiting map[string]podplan.Waiting) {
	for name, w := range waiting {
		if w.Reason == podplan.WaitingReasonCrashLoopBackOff {
			m.cfg.Recorder.ContainerEventf(pod, name, corev1.EventTypeWarning, eventBackOff,
				"Back-off restarting failed container %s in pod %s_%s(%s)", name, pod.Name, pod.Namespace, pod.UID)
			continue
		}
		m.cfg.Recorder.ContainerEventf(pod, name, corev1.EventTypeWarning, eventFailed, "Error: %s", w.Message)
	}
}

// sandboxAttempt is the attempt of the sandbox containers are started in:
// the plan's for a new sandbox, else the existing sandbox's.
func sandboxAttempt(rt *runtimestate.Pod, actions podplan.Actions) uint32 {
	if actions.CreateSandbox || rt == nil {
		return actions.Attempt
	}
	for _, s := range rt.Sandboxes {
		if s.ID == actions.SandboxID {
			return s.Attempt
		}
	}
	return actions.Attempt
}

// killContainers stops the containers the plan names, each with the
// plan's message in its Killing event.
func (m *Manager) killContainers(ctx context.Context, pod *corev1.Pod, rt *runtimestate.Pod, kills map[podplan.ContainerRef]podplan.KillReason) error {
	var errs []error
	podIPs := m.hookPodIPs(pod, rt)
	for ref, reason := range kills {
		c := runtimestate.Container{ID: ref.ID, Name: ref.Name}
		if known := runtimeContainer(rt, ref.ID); known != nil {
			c = *known
		}
		req := killRequest{Pod: pod, EvPod: pod, Container: c, Message: reason.Message, Reason: reason.Reason, PodIPs: podIPs}
		if err := m.killContainer(ctx, req); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("kill containers: %w", err)
	}
	return nil
}

// sandboxIPs returns the pod IPs containers see in their environment: the
// sandbox's, read from the runtime when it was just created, else from the
// runtime state; the host's for a host-network pod (upstream takes them
// from the generated pod status).
func (m *Manager) sandboxIPs(ctx context.Context, pod *corev1.Pod, rt *runtimestate.Pod, sandboxID string, created bool) []string {
	if pod.Spec.HostNetwork {
		return m.cfg.HostIPs
	}
	if !created && rt != nil {
		for _, s := range rt.Sandboxes {
			if s.ID == sandboxID {
				return s.IPs
			}
		}
	}
	resp, err := m.cfg.Runtime.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sandboxID})
	if err != nil {
		klog.FromContext(ctx).Error(err, "Failed to read the pod sandbox status for its IPs", "podSandboxID", sandboxID)
		return nil
	}
	return sandboxFromStatus(resp.GetStatus()).IPs
}
