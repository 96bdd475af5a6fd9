package timeline

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// DefaultMaxEntries is a pod's bound when Config.MaxEntries is zero.
const DefaultMaxEntries = 256

// Config holds the Recorder's clock and bound.
type Config struct {
	Clock clock.PassiveClock
	// MaxEntries bounds each pod's entries (0: DefaultMaxEntries).
	MaxEntries int
}

// EndFunc ends a stage Begin started: bytes (0: unknown) and note (a
// message on success) are kept, err != nil makes it failed with its
// message. Only its first call counts.
type EndFunc = func(bytes int64, note string, err error)

// Recorder keeps every pod's timeline. Safe for concurrent use; a nil
// *Recorder records nothing.
type Recorder struct {
	clock clock.PassiveClock
	max   int
	// mu guards pods and byName.
	mu   sync.Mutex
	pods map[types.UID]*podTimeline
	// byName maps "<namespace>/<name>" to the UID of the latest pod of
	// that name; its entry ends with that pod's (Forget).
	byName map[string]types.UID
}

// podTimeline is one pod's record; the Recorder's mu guards it.
type podTimeline struct {
	pod     *corev1.Pod // the latest seen, for its spec (probes, sidecars)
	entries []entry
	dropped int
	seq     uint64
	// done holds "<stage>/<target>" of the once-only stages set up.
	done map[string]bool
	// open maps a probe ("<container> <probe>") to its entry's seq, 0
	// once it succeeded.
	open map[string]uint64
	// inits holds each init container's latest run, by name.
	inits map[string]initRun
	// running is when a generated status first showed phase Running.
	running time.Time
	written bool
}

// initRun is an init container instance's run and its entry.
type initRun struct {
	id  string // the container ID
	seq uint64
}

type entry struct {
	seq uint64
	Stage
}

// onceStages are set up idempotently on every sync: an ok entry is
// recorded once per target, failed attempts every time.
var onceStages = map[string]bool{StageVolume: true}

// New returns a Recorder.
func New(cfg Config) (*Recorder, error) {
	if cfg.Clock == nil {
		return nil, errors.New("create timeline recorder: a clock is required")
	}
	if cfg.MaxEntries <= 0 {
		cfg.MaxEntries = DefaultMaxEntries
	}
	return &Recorder{clock: cfg.Clock, max: cfg.MaxEntries, pods: map[types.UID]*podTimeline{}, byName: map[string]types.UID{}}, nil
}

func noEnd(int64, string, error) {}

// Begin starts a stage of the pod now and returns its end. A once-only
// stage already set up for target records nothing.
func (r *Recorder) Begin(pod *corev1.Pod, stage, target string) EndFunc {
	if r == nil || pod == nil {
		return noEnd
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.record(pod)
	if onceStages[stage] && p.done[stage+"/"+target] {
		return noEnd
	}
	seq := r.add(p, Stage{Name: stage, Target: target, Start: r.clock.Now(), Outcome: OutcomeRunning})
	uid := pod.UID
	var once sync.Once
	return func(bytes int64, note string, err error) {
		once.Do(func() { r.end(uid, seq, r.clock.Now(), bytes, note, err) })
	}
}

// Progress sets the progress of the pod's latest running stage of that
// name and target (an image pull); nothing if there is none.
func (r *Recorder) Progress(pod *corev1.Pod, stage, target string, p Progress) {
	if r == nil || pod == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.pods[pod.UID]
	if t == nil {
		return
	}
	for i := len(t.entries) - 1; i >= 0; i-- {
		if e := &t.entries[i]; e.Name == stage && e.Target == target && e.Outcome == OutcomeRunning {
			e.Progress = &p
			return
		}
	}
}

// record returns the pod's record, created at its first sighting, and
// keeps pod as its latest. r.mu is held.
func (r *Recorder) record(pod *corev1.Pod) *podTimeline {
	p := r.pods[pod.UID]
	if p == nil {
		p = &podTimeline{done: map[string]bool{}, open: map[string]uint64{}, inits: map[string]initRun{}}
		r.pods[pod.UID] = p
	}
	p.pod = pod
	r.byName[pod.Namespace+"/"+pod.Name] = pod.UID
	return p
}

// add appends an entry, dropping the oldest past the bound, and returns
// its seq. r.mu is held.
func (r *Recorder) add(p *podTimeline, s Stage) uint64 {
	if len(p.entries) >= r.max {
		n := len(p.entries) - r.max + 1
		p.entries = slices.Delete(p.entries, 0, n)
		p.dropped += n
	}
	p.seq++
	p.entries = append(p.entries, entry{seq: p.seq, Stage: s})
	return p.seq
}

// end ends the entry seq of the pod at at, if it is still held.
func (r *Recorder) end(uid types.UID, seq uint64, at time.Time, bytes int64, note string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.pods[uid]
	if p == nil {
		return
	}
	e := p.find(seq)
	if e == nil {
		return // dropped past the bound
	}
	e.finish(at, bytes, note, err)
	if err == nil && onceStages[e.Name] {
		p.done[e.Name+"/"+e.Target] = true
	}
}

// find returns the entry seq, nil if it was dropped.
func (p *podTimeline) find(seq uint64) *entry {
	i, ok := slices.BinarySearchFunc(p.entries, seq, func(e entry, seq uint64) int { return cmp.Compare(e.seq, seq) })
	if !ok {
		return nil
	}
	return &p.entries[i]
}

// finish ends a running entry at at (never before its start).
func (e *entry) finish(at time.Time, bytes int64, note string, err error) {
	if e.Outcome != OutcomeRunning {
		return
	}
	if at.Before(e.Start) {
		at = e.Start
	}
	e.End = &at
	e.DurationSeconds = at.Sub(e.Start).Seconds()
	e.Outcome, e.Message, e.Bytes = OutcomeOK, note, bytes
	if err != nil {
		e.Outcome, e.Message = OutcomeFailed, err.Error()
	}
}

// Get returns the timeline of the latest pod named namespace/name, its
// stages by start (entries that began together in the order recorded).
func (r *Recorder) Get(namespace, name string) (Timeline, bool) {
	if r == nil {
		return Timeline{}, false
	}
	now := r.clock.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	uid, ok := r.byName[namespace+"/"+name]
	if !ok {
		return Timeline{}, false
	}
	p := r.pods[uid]
	t := Timeline{Pod: namespace + "/" + name, UID: uid, Created: p.pod.CreationTimestamp.Time, Now: now, Dropped: p.dropped,
		Stages: make([]Stage, 0, len(p.entries))}
	for _, e := range p.entries {
		s := e.Stage
		if s.End == nil {
			s.DurationSeconds = max(now.Sub(s.Start).Seconds(), 0)
		} else {
			end := *s.End
			s.End = &end
		}
		t.Stages = append(t.Stages, s)
	}
	slices.SortStableFunc(t.Stages, func(a, b Stage) int { return a.Start.Compare(b.Start) })
	return t, true
}

// Forget drops the pod's timeline: the pod is gone (podgone.Owner).
func (r *Recorder) Forget(_ context.Context, uid types.UID) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.pods[uid]
	if p == nil {
		return
	}
	delete(r.pods, uid)
	if key := p.pod.Namespace + "/" + p.pod.Name; r.byName[key] == uid {
		delete(r.byName, key)
	}
}

// HeldPods lists the pods with a timeline (podgone.Holder): a pod whose
// worker never started is found by housekeeping.
func (r *Recorder) HeldPods() []types.UID {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]types.UID, 0, len(r.pods))
	for uid := range r.pods {
		out = append(out, uid)
	}
	return out
}
