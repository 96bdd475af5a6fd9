package podworker

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var (
	allPhases = []Phase{Waiting, Syncing, Terminating, Terminated, Finished}
	allEvents = []Event{
		UpdateSync, UpdateKill, StartAllowed, SyncOK, SyncReturnedAgain, SyncReturnedTerminal, SyncFailed,
		TerminatingDone, OrphanTerminatingDone, TerminatingFailed, TerminatedDone, TerminatedFailed,
	}
)

type outcome struct {
	Phase  Phase
	Action Action
}

// expectedTransitions is the transition table written out in full: one row
// per phase, one column per event in allEvents order.
var expectedTransitions = map[Phase][]outcome{
	Waiting: {
		UpdateSync:            {Waiting, CheckStart},
		UpdateKill:            {Terminating, CallSyncTerminatingPod},
		StartAllowed:          {Syncing, CallSyncPod},
		SyncOK:                {Waiting, None},
		SyncReturnedAgain:     {Waiting, None},
		SyncReturnedTerminal:  {Waiting, None},
		SyncFailed:            {Waiting, None},
		TerminatingDone:       {Waiting, None},
		OrphanTerminatingDone: {Waiting, None},
		TerminatingFailed:     {Waiting, None},
		TerminatedDone:        {Waiting, None},
		TerminatedFailed:      {Waiting, None},
	},
	Syncing: {
		UpdateSync:            {Syncing, CallSyncPod},
		UpdateKill:            {Terminating, CallSyncTerminatingPod},
		StartAllowed:          {Syncing, None},
		SyncOK:                {Syncing, RequeueResync},
		SyncReturnedAgain:     {Syncing, CallSyncPod},
		SyncReturnedTerminal:  {Terminating, CallSyncTerminatingPod},
		SyncFailed:            {Syncing, RequeueBackoff},
		TerminatingDone:       {Syncing, None},
		OrphanTerminatingDone: {Syncing, None},
		TerminatingFailed:     {Syncing, None},
		TerminatedDone:        {Syncing, None},
		TerminatedFailed:      {Syncing, None},
	},
	Terminating: {
		UpdateSync:            {Terminating, CallSyncTerminatingPod},
		UpdateKill:            {Terminating, CallSyncTerminatingPod},
		StartAllowed:          {Terminating, None},
		SyncOK:                {Terminating, CallSyncTerminatingPod},
		SyncReturnedAgain:     {Terminating, CallSyncTerminatingPod},
		SyncReturnedTerminal:  {Terminating, CallSyncTerminatingPod},
		SyncFailed:            {Terminating, CallSyncTerminatingPod},
		TerminatingDone:       {Terminated, CallSyncTerminatedPod},
		OrphanTerminatingDone: {Finished, None},
		TerminatingFailed:     {Terminating, RequeueBackoff},
		TerminatedDone:        {Terminating, None},
		TerminatedFailed:      {Terminating, None},
	},
	Terminated: {
		UpdateSync:            {Terminated, CallSyncTerminatedPod},
		UpdateKill:            {Terminated, CallSyncTerminatedPod},
		StartAllowed:          {Terminated, None},
		SyncOK:                {Terminated, None},
		SyncReturnedAgain:     {Terminated, None},
		SyncReturnedTerminal:  {Terminated, None},
		SyncFailed:            {Terminated, None},
		TerminatingDone:       {Terminated, None},
		OrphanTerminatingDone: {Terminated, None},
		TerminatingFailed:     {Terminated, None},
		TerminatedDone:        {Finished, None},
		TerminatedFailed:      {Terminated, RequeueBackoff},
	},
	Finished: {
		UpdateSync:            {Finished, None},
		UpdateKill:            {Finished, None},
		StartAllowed:          {Finished, None},
		SyncOK:                {Finished, None},
		SyncReturnedAgain:     {Finished, None},
		SyncReturnedTerminal:  {Finished, None},
		SyncFailed:            {Finished, None},
		TerminatingDone:       {Finished, None},
		OrphanTerminatingDone: {Finished, None},
		TerminatingFailed:     {Finished, None},
		TerminatedDone:        {Finished, None},
		TerminatedFailed:      {Finished, None},
	},
}

func TestTransitionTable(t *testing.T) {
	for _, p := range allPhases {
		row, ok := expectedTransitions[p]
		if !ok || len(row) != len(allEvents) {
			t.Fatalf("expected table has no full row for %v", p)
		}
		for _, ev := range allEvents {
			var got outcome
			got.Phase, got.Action = Transition(p, ev)
			if diff := cmp.Diff(row[ev], got); diff != "" {
				t.Errorf("Transition(%v, %v) mismatch (-want +got):\n%s", p, ev, diff)
			}
		}
	}
}

// Update events are applied twice (when enqueued and when taken); the second
// application must not move the phase again.
func TestTransitionUpdateEventsIdempotent(t *testing.T) {
	for _, p := range allPhases {
		for _, ev := range []Event{UpdateSync, UpdateKill} {
			once, _ := Transition(p, ev)
			twice, _ := Transition(once, ev)
			if once != twice {
				t.Errorf("%v then %v twice: %v then %v", p, ev, once, twice)
			}
		}
	}
}

// A phase never moves backwards.
func TestTransitionMonotonic(t *testing.T) {
	for _, p := range allPhases {
		for _, ev := range allEvents {
			if next, _ := Transition(p, ev); next < p {
				t.Errorf("Transition(%v, %v) moved back to %v", p, ev, next)
			}
		}
	}
}

func TestStrings(t *testing.T) {
	for _, p := range allPhases {
		if s := p.String(); s == "" || strings.HasPrefix(s, "Phase(") {
			t.Errorf("phase %d has no name", int(p))
		}
	}
	for _, ev := range allEvents {
		if s := ev.String(); s == "" || strings.HasPrefix(s, "Event(") {
			t.Errorf("event %d has no name", int(ev))
		}
	}
	for a := None; a <= RequeueBackoff; a++ {
		if s := a.String(); s == "" || strings.HasPrefix(s, "Action(") {
			t.Errorf("action %d has no name", int(a))
		}
	}
}
