package prober

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// instance is a worker's state about the container instance it probes.
// The zero value means "no instance seen yet".
type instance struct {
	// ContainerID is the runtime container ID (without the "containerd://"
	// prefix) of the instance the results are about.
	ContainerID string
	// OnHold: a liveness or startup failure was recorded for this instance;
	// probing stops until a new instance appears (as upstream).
	OnHold bool
	// Last and Run count consecutive identical raw results.
	Last Result
	Run  int
}

// observation is what a worker sees at a tick.
type observation struct {
	// HasStatus is false while the pod has no generated status.
	HasStatus bool
	Phase     corev1.PodPhase
	// Container is the probed container's status; nil while it has no
	// container ID.
	Container *corev1.ContainerStatus
	// NoRestart: the container, terminated, is not started again (see
	// noRestart in worker.go).
	NoRestart bool
	// Deleting: the pod has a deletion timestamp.
	Deleting bool
	// Started: the current instance passed its startup probe, or the
	// container has none.
	Started bool
	Now     time.Time
}

// tick is what a worker does at one tick, before probing.
type tick struct {
	// Instance is the worker's new state.
	Instance instance
	// Set, when SetResult, is recorded for Instance.ContainerID.
	Set       Result
	SetResult bool
	// Probe: run the handler now.
	Probe bool
	// Stop: the worker ends (pod finished, or deletion requested for a
	// liveness or startup worker).
	Stop bool
}

// decide is upstream's doProbe up to the handler call: which probes run
// given the pod, the container's state, its initial delay and its startup
// state.
func decide(t ProbeType, spec *corev1.Probe, st instance, obs observation) tick {
	out := tick{Instance: st}
	if !obs.HasStatus {
		return out
	}
	if podutil.IsTerminal(obs.Phase) {
		out.Stop = true
		return out
	}
	c := obs.Container
	if c == nil || c.ContainerID == "" {
		return out
	}
	if id := runtimeID(c.ContainerID); id != st.ContainerID {
		out.Instance = instance{ContainerID: id}
		out.Set, out.SetResult = initialResult(t), true
	}
	if out.Instance.OnHold {
		return out
	}
	if c.State.Running == nil {
		out.Set, out.SetResult = Failure, true
		// Stop when the container will not run again.
		out.Stop = c.State.Terminated != nil && obs.NoRestart
		return out
	}
	if obs.Deleting && (t == Liveness || t == Startup) {
		// A quiet shutdown: nothing restarts a container being deleted.
		out.Set, out.SetResult = Success, true
		out.Stop = true
		return out
	}
	if obs.Now.Sub(c.State.Running.StartedAt.Time) < time.Duration(spec.InitialDelaySeconds)*time.Second {
		return out
	}
	// Startup probes run until the instance started; the others after.
	out.Probe = obs.Started != (t == Startup)
	return out
}

// record applies one handler result to the instance state and reports the
// result to record once its threshold is reached (ok false: below
// threshold, nothing changes).
func record(t ProbeType, spec *corev1.Probe, st instance, r Result) (instance, Result, bool) {
	if st.Last == r && st.Run > 0 {
		st.Run++
	} else {
		st.Last, st.Run = r, 1
	}
	success, failure := thresholds(spec)
	if (r == Failure && st.Run < failure) || (r == Success && st.Run < success) {
		return st, Unknown, false
	}
	if (t == Liveness || t == Startup) && r == Failure {
		// The instance will be killed: stop probing it.
		st.OnHold, st.Run = true, 0
	}
	return st, r, true
}

// thresholds returns the probe's success and failure thresholds, with the
// API defaults (1 and 3) for unset values.
func thresholds(spec *corev1.Probe) (success, failure int) {
	success, failure = int(spec.SuccessThreshold), int(spec.FailureThreshold)
	if success <= 0 {
		success = 1
	}
	if failure <= 0 {
		failure = 3
	}
	return success, failure
}

// period and timeout return the probe's periodSeconds and timeoutSeconds,
// with the API defaults (10 s and 1 s) for unset values.
func period(spec *corev1.Probe) time.Duration {
	if spec.PeriodSeconds <= 0 {
		return 10 * time.Second
	}
	return time.Duration(spec.PeriodSeconds) * time.Second
}

func timeout(spec *corev1.Probe) time.Duration {
	if spec.TimeoutSeconds <= 0 {
		return time.Second
	}
	return time.Duration(spec.TimeoutSeconds) * time.Second
}

// runtimeID strips the "<runtime>://" prefix of a status container ID.
func runtimeID(statusID string) string {
	if _, id, ok := strings.Cut(statusID, "://"); ok {
		return id
	}
	return statusID
}

// probeOf returns the container's probe of type t, or nil.
func probeOf(c *corev1.Container, t ProbeType) *corev1.Probe {
	switch t {
	case Liveness:
		return c.LivenessProbe
	case Readiness:
		return c.ReadinessProbe
	case Startup:
		return c.StartupProbe
	}
	return nil
}

// findStatus returns the status of the named container among the regular
// then the init containers, skipping entries without a container ID.
func findStatus(s *corev1.PodStatus, name string) *corev1.ContainerStatus {
	for _, list := range [][]corev1.ContainerStatus{s.ContainerStatuses, s.InitContainerStatuses} {
		for i := range list {
			if list[i].Name == name && list[i].ContainerID != "" {
				return &list[i]
			}
		}
	}
	return nil
}
