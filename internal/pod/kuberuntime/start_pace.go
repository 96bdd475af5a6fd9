package kuberuntime

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// startPace orders the starts of new pods (a sandbox and its first
// containers) when many arrive at once: as many start at a time as the
// runtime takes without its latency climbing (startLimit, start_limit.go),
// the others wait, the pod berth saw first going first. Upstream starts
// every pod of a burst at once; on a busy runtime the pods then share its
// CPU and all finish near the end of the burst. Taking them a few at a time
// finishes most pods much sooner; taking no fewer than the runtime can run
// at once keeps the last as soon; the oldest first keeps any pod from
// waiting behind those that came after it.
//
// Only the starts of new sandboxes wait (Apply with CreateSandbox): the
// containers of a pod whose sandbox is ready start at once, ahead of any
// new sandbox. Their latencies still count for the limit: they load the
// same runtime.
//
// A slot is held until the start ends or for hold, whichever comes first,
// so a start that hangs (a CNI plugin, a long image pull) delays the pods
// behind it by hold at most and never stops them: past hold the starts
// simply overlap, as upstream's. nil paces nothing.
//
// A startPace is safe for concurrent use.
type startPace struct {
	clock clock.Clock
	hold  time.Duration
	// onLimit is told each new limit (Observers.StartLimit); nil: none.
	onLimit func(int)

	mu sync.Mutex // guards the fields below
	// limit says how many slots there are; running are held.
	limit   startLimit
	running int
	// queue are the waiters, oldest first (startWaiter.before).
	queue []*startWaiter
	seq   uint64
}

// startWaiter is one acquire waiting for a slot.
type startWaiter struct {
	// firstSeen (when berth first saw the pod) and seq (the order of the
	// asks) order the queue.
	firstSeen time.Time
	seq       uint64
	// granted is closed once the waiter holds a slot; end frees it. Both
	// are set under startPace.mu before granted closes.
	granted chan struct{}
	end     func()
}

func (w *startWaiter) before(o *startWaiter) bool {
	if !w.firstSeen.Equal(o.firstSeen) {
		return w.firstSeen.Before(o.firstSeen)
	}
	return w.seq < o.seq
}

// StartLimits bound how many new pods start at once (Config.PodStarts):
// the limit starts at Initial and moves between Floor and Ceiling with the
// runtime's latency (start_limit.go). The zero value paces nothing: every
// pod starts at once, as upstream.
type StartLimits struct {
	Floor, Initial, Ceiling int
}

// PodStartLimits are the limits of new pod starts on a host of cpus CPUs:
// one a CPU at least, two a CPU to begin with, eight a CPU at most. On the
// bench machine (2 cores) bursts of 30 pods through the CRI alone started
// with a median of 1.5 s at 4 or 8 at a time against 2.2-2.4 s all at once,
// the last pod at the same 2.5 s; more CPUs let the runtime do more at
// once, and the limit finds how many.
func PodStartLimits(cpus int) StartLimits {
	c := max(cpus, 1)
	return StartLimits{Floor: c, Initial: 2 * c, Ceiling: 8 * c}
}

func (l StartLimits) validate() error {
	if l == (StartLimits{}) {
		return nil
	}
	if l.Floor < 1 || l.Initial < l.Floor || l.Ceiling < l.Initial {
		return fmt.Errorf("pod start limits %+v: want 1 <= Floor <= Initial <= Ceiling", l)
	}
	return nil
}

// startHold is how long a start keeps its slot at most: several times
// what a start takes when the runtime is busy with a burst (0.5-1 s on
// the bench machine), short enough that a hung one costs the pods behind
// it little.
const startHold = 3 * time.Second

// newStartPace returns the pace of limits (validated), each start holding
// its slot for hold at most; zero limits are nil, no pacing.
func newStartPace(limits StartLimits, hold time.Duration, clk clock.Clock, onLimit func(int)) *startPace {
	if limits == (StartLimits{}) {
		return nil
	}
	p := &startPace{clock: clk, hold: hold, onLimit: onLimit, limit: newStartLimit(limits)}
	if onLimit != nil {
		onLimit(p.limit.slots())
	}
	return p
}

// acquire waits for a slot or the end of ctx and returns how long it
// waited and the function that ends the start (safe to call once the hold
// has already freed the slot). firstSeen is when berth first saw the pod
// (zero: now); the oldest waiter gets the next slot.
func (p *startPace) acquire(ctx context.Context, firstSeen time.Time) (done func(), waited time.Duration, err error) {
	if p == nil {
		return func() {}, 0, nil
	}
	begin := p.clock.Now()
	if firstSeen.IsZero() || firstSeen.After(begin) {
		firstSeen = begin
	}
	p.mu.Lock()
	w := &startWaiter{firstSeen: firstSeen, seq: p.seq, granted: make(chan struct{})}
	p.seq++
	i, _ := slices.BinarySearchFunc(p.queue, w, func(a, b *startWaiter) int {
		if a.before(b) {
			return -1
		}
		return 1
	})
	p.queue = slices.Insert(p.queue, i, w)
	p.dispatch()
	p.mu.Unlock()

	select {
	case <-w.granted:
		return w.end, p.clock.Since(begin), nil
	case <-ctx.Done():
	}
	p.mu.Lock()
	var end func()
	if i := slices.Index(p.queue, w); i >= 0 {
		p.queue = slices.Delete(p.queue, i, i+1)
	} else {
		end = w.end // granted as ctx ended: give the slot back
	}
	p.mu.Unlock()
	if end != nil {
		end()
	}
	return nil, p.clock.Since(begin), fmt.Errorf("wait for a pod start slot: %w", context.Cause(ctx))
}

// dispatch gives free slots to the oldest waiters. Called with mu held.
func (p *startPace) dispatch() {
	for len(p.queue) > 0 && p.running < p.limit.slots() {
		w := p.queue[0]
		p.queue = slices.Delete(p.queue, 0, 1)
		p.running++
		w.end = p.holdSlot()
		close(w.granted)
	}
}

// holdSlot starts the hold of a slot just given and returns the end of
// its start. The slot is freed once, by whichever comes first. Called with
// mu held.
func (p *startPace) holdSlot() func() {
	var freed, ended sync.Once
	free := func() {
		freed.Do(func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			p.running--
			p.dispatch()
		})
	}
	stop := make(chan struct{})
	t := p.clock.NewTimer(p.hold)
	go func() {
		select {
		case <-t.C():
			free()
		case <-stop:
			t.Stop()
		}
	}()
	return func() { ended.Do(func() { close(stop); free() }) }
}

// observe takes the latency of a sandbox or container start that
// succeeded and moves the limit; a larger limit gives its new slots to
// the waiters at once. A change of the limit is logged at V(4) and told
// to onLimit (which must not block).
func (p *startPace) observe(ctx context.Context, kind startKind, took time.Duration) {
	if p == nil {
		return
	}
	p.mu.Lock()
	was := p.limit.slots()
	p.limit.observe(kind, took, p.running, p.clock.Now())
	now, baseline, running, waiting := p.limit.slots(), p.limit.baseline(kind), p.running, len(p.queue)
	if now != was {
		p.dispatch()
		if p.onLimit != nil {
			// Under mu, so that the last limit told is the last set.
			p.onLimit(now)
		}
	}
	p.mu.Unlock()
	if now != was {
		klog.FromContext(ctx).V(4).Info("Pod start limit changed", "limit", now, "previous", was,
			"kind", kind.String(), "latency", took, "baseline", baseline, "running", running, "waiting", waiting)
	}
}
