package pleg

import (
	"sort"

	"k8s.io/apimachinery/pkg/types"

	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// EventType is the kind of a pod lifecycle event.
type EventType int

const (
	// ContainerStarted: a container (or sandbox) is now running.
	ContainerStarted EventType = iota
	// ContainerDied: a container (or sandbox) stopped running.
	ContainerDied
	// ContainerRemoved: a container (or sandbox) is gone from the runtime.
	ContainerRemoved
	// ContainerChanged: a container moved to a state the PLEG does not
	// track precisely (created or unknown). Diff reports it; the PLEG
	// inspects the pod but does not publish it, as upstream.
	ContainerChanged
	// PodSync: the pod changed in a way no single container transition
	// describes. Diff never emits it; it is reserved for producers that
	// are not based on relisting (an evented runtime, watch conditions).
	PodSync
)

func (t EventType) String() string {
	switch t {
	case ContainerStarted:
		return "ContainerStarted"
	case ContainerDied:
		return "ContainerDied"
	case ContainerRemoved:
		return "ContainerRemoved"
	case ContainerChanged:
		return "ContainerChanged"
	case PodSync:
		return "PodSync"
	}
	return "Unknown"
}

// Event is one pod lifecycle event. Data is the ID of the container or
// sandbox whose state changed ("" for PodSync).
type Event struct {
	ID   types.UID
	Type EventType
	Data string
}

// idState is the state of one container or sandbox ID as the diff sees it.
// It adds "absent" to the runtime states and folds created into unknown
// (berth, like the upstream kubelet, does not act on "created").
type idState int

const (
	stateAbsent idState = iota
	stateRunning
	stateExited
	stateUnknown
)

func (s idState) String() string {
	switch s {
	case stateRunning:
		return "running"
	case stateExited:
		return "exited"
	case stateUnknown:
		return "unknown"
	}
	return "absent"
}

func containerState(s runtimestate.ContainerState) idState {
	switch s {
	case runtimestate.ContainerRunning:
		return stateRunning
	case runtimestate.ContainerExited:
		return stateExited
	}
	// Created and unknown.
	return stateUnknown
}

func sandboxState(s runtimestate.SandboxState) idState {
	if s == runtimestate.SandboxReady {
		return stateRunning
	}
	return stateExited
}

// transition is the upstream relist transition table, keyed on the new
// state (the old state matters only when the ID disappears):
//
//	old \ new   absent            running   exited   unknown
//	absent      -                 Started   Died     Changed
//	running     Died, Removed     -         Died     Changed
//	exited      Removed           Started   -        Changed
//	unknown     Died, Removed     Started   Died     -
func transition(from, to idState) []EventType {
	if from == to {
		return nil
	}
	switch to {
	case stateRunning:
		return []EventType{ContainerStarted}
	case stateExited:
		return []EventType{ContainerDied}
	case stateUnknown:
		return []EventType{ContainerChanged}
	}
	// to is absent.
	if from == stateExited {
		// Its death was reported already.
		return []EventType{ContainerRemoved}
	}
	return []EventType{ContainerDied, ContainerRemoved}
}

// Diff compares two runtime listings (prev, then cur), keyed by pod UID, and returns the
// events of every container and sandbox transition between them. Sandboxes
// are treated like containers: their ID is the event's Data. The result is
// sorted by pod UID, then by ID; the events of one ID keep the order of the
// transition table (Died before Removed). Diff does not modify its inputs.
func Diff(prev, cur map[types.UID]*runtimestate.Pod) []Event {
	var events []Event
	for _, uid := range unionUIDs(prev, cur) {
		events = append(events, diffPod(uid, prev[uid], cur[uid])...)
	}
	return events
}

// diffPod returns the events of one pod, sorted by ID. Either pod may be nil.
func diffPod(uid types.UID, prev, cur *runtimestate.Pod) []Event {
	oldStates, newStates := idStates(prev), idStates(cur)
	ids := make([]string, 0, len(newStates)+len(oldStates))
	for id := range newStates {
		ids = append(ids, id)
	}
	for id := range oldStates {
		if _, ok := newStates[id]; !ok {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	var events []Event
	for _, id := range ids {
		for _, t := range transition(oldStates[id], newStates[id]) {
			events = append(events, Event{ID: uid, Type: t, Data: id})
		}
	}
	return events
}

// idStates maps every container and sandbox ID of the pod to its state. A
// missing ID reads as stateAbsent (the zero value).
func idStates(p *runtimestate.Pod) map[string]idState {
	if p == nil {
		return nil
	}
	m := make(map[string]idState, len(p.Containers)+len(p.Sandboxes))
	for _, c := range p.Containers {
		m[c.ID] = containerState(c.State)
	}
	for _, s := range p.Sandboxes {
		m[s.ID] = sandboxState(s.State)
	}
	return m
}
