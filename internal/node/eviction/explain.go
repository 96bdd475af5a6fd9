package eviction

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// Snapshot is what one pass looked at and decided, as the manager keeps
// it for the explainer (Manager.Explain). A plain value: the manager
// publishes a new one every pass and never modifies one it published.
type Snapshot struct {
	At           time.Time
	Thresholds   []Threshold
	Observations Observations
	Decision     Decision
	// Pods are the pods the pass could evict (active, termination not
	// requested), Stats their stats.
	Pods             []*corev1.Pod
	Stats            PodStats
	DedicatedImageFs bool
	// MaxPodGracePeriod and LocalStorageCapacityIsolation are the
	// manager's settings (Config).
	MaxPodGracePeriod             int64
	LocalStorageCapacityIsolation bool
	// Evicted are the evictions the pass made.
	Evicted []Eviction
}

// notObservedMessage is the explanation before the manager's first pass.
const notObservedMessage = "the eviction manager has not observed the node yet"

// Explanation is what /debug/eviction answers: the last pass's signals,
// thresholds and conditions, what it would reclaim, and the pods in the
// order it evicts them per signal. A plain value, encoded as JSON or
// written as a table (WriteText).
type Explanation struct {
	// Observed is false before the manager's first pass; Message says so
	// and the other fields are empty.
	Observed         bool            `json:"observed"`
	Message          string          `json:"message,omitempty"`
	ObservedAt       string          `json:"observedAt,omitempty"`
	DedicatedImageFs *bool           `json:"dedicatedImageFs,omitempty"`
	Signals          []SignalView    `json:"signals,omitempty"`
	Thresholds       []ThresholdView `json:"thresholds,omitempty"`
	Conditions       []ConditionView `json:"conditions,omitempty"`
	Reclaim          *ReclaimView    `json:"reclaim,omitempty"`
	LocalStorage     []EvictionView  `json:"localStorageEvictions,omitempty"`
	Evicted          []EvictionView  `json:"evicted,omitempty"`
	Rankings         []RankingView   `json:"rankings,omitempty"`
}

// SignalView is one observed signal.
type SignalView struct {
	Signal           Signal  `json:"signal"`
	Available        string  `json:"available"`
	Capacity         string  `json:"capacity"`
	AvailablePercent float64 `json:"availablePercent"`
	ObservedAt       string  `json:"observedAt,omitempty"`
}

// Threshold statuses, one per threshold (ThresholdView.Status).
const (
	StatusNotObserved      = "NotObserved"      // its signal is not observed
	StatusNotMet           = "NotMet"           // available is at or above it
	StatusMetInGracePeriod = "MetInGracePeriod" // met, its grace period not over yet
	StatusMet              = "Met"              // met past its grace period: the manager acts on it
	StatusHeld             = "HeldForMinimumReclaim"
)

// ThresholdView is one configured threshold and how close it is.
type ThresholdView struct {
	Signal Signal `json:"signal"`
	// Kind is "hard" or "soft".
	Kind        string `json:"kind"`
	Value       string `json:"value"`
	GracePeriod string `json:"gracePeriod"`
	MinReclaim  string `json:"minReclaim,omitempty"`
	// Quantity is Value for the signal's capacity.
	Quantity string `json:"quantity,omitempty"`
	// Met: the signal's available amount is below Quantity now.
	Met    bool   `json:"met"`
	Status string `json:"status"`
	// Since is when the threshold was first met (a soft threshold's
	// observed-at, from which its grace period runs).
	Since          string `json:"since,omitempty"`
	GraceRemaining string `json:"graceRemaining,omitempty"`
	// Left is the amount available above Quantity (negative: crossed by
	// that much), LeftPercent the same as a percentage of the capacity.
	Left        string  `json:"left,omitempty"`
	LeftPercent float64 `json:"leftPercent"`
}

// ConditionView is one node condition the eviction manager reports.
type ConditionView struct {
	Type   corev1.NodeConditionType `json:"type"`
	Status corev1.ConditionStatus   `json:"status"`
	// LastObservedAt is when a threshold of it was last met; the
	// condition stays True evictionPressureTransitionPeriod after.
	LastObservedAt string `json:"lastObservedAt,omitempty"`
}

// ReclaimView is what the pass reclaims: the threshold it acts on and the
// pod it evicts for it (Choose), unless node-level reclaim frees enough.
type ReclaimView struct {
	Signal           Signal              `json:"signal"`
	Resource         corev1.ResourceName `json:"resource"`
	NodeReclaimFirst bool                `json:"nodeReclaimFirst"`
	// Next is nil when no pod can be evicted.
	Next *EvictionView `json:"next,omitempty"`
}

// EvictionView is one eviction, made or to make.
type EvictionView struct {
	Pod                string `json:"pod"`
	UID                string `json:"uid"`
	Signal             Signal `json:"signal"`
	GracePeriodSeconds int64  `json:"gracePeriodSeconds"`
	Message            string `json:"message"`
}

// RankingView is the eviction order for one signal.
type RankingView struct {
	Signal   Signal              `json:"signal"`
	Resource corev1.ResourceName `json:"resource"`
	Pods     []RankedView        `json:"pods"`
}

// RankedView is one pod's place in a ranking and why.
type RankedView struct {
	Position        int                `json:"position"`
	Pod             string             `json:"pod"`
	UID             string             `json:"uid"`
	QOSClass        corev1.PodQOSClass `json:"qosClass"`
	Priority        int32              `json:"priority"`
	HasStats        bool               `json:"hasStats"`
	Usage           string             `json:"usage,omitempty"`
	Request         string             `json:"request,omitempty"`
	ExceedsRequests bool               `json:"exceedsRequests"`
	AboveRequest    string             `json:"aboveRequest,omitempty"`
	Critical        bool               `json:"critical"`
	// Next marks the pod the pass evicts for its reclaim signal.
	Next   bool   `json:"next,omitempty"`
	Reason string `json:"reason"`
}

// NotObserved is the explanation before the manager's first pass.
func NotObserved() Explanation {
	return Explanation{Message: notObservedMessage}
}

// Explain explains a pass. The order it shows is RankPods' and the next
// eviction Choose's, over the pass's own inputs: what the manager did or
// would do, not a second opinion.
func Explain(s Snapshot) Explanation {
	e := Explanation{Observed: true, ObservedAt: stamp(s.At), DedicatedImageFs: &s.DedicatedImageFs}
	e.Signals = signalViews(s.Observations)
	e.Thresholds = thresholdViews(s)
	e.Conditions = conditionViews(s.Decision)
	if s.LocalStorageCapacityIsolation {
		for _, ev := range LocalStorageEvictions(s.Pods, s.Stats, s.DedicatedImageFs) {
			e.LocalStorage = append(e.LocalStorage, evictionView(ev))
		}
	}
	for _, ev := range s.Evicted {
		e.Evicted = append(e.Evicted, evictionView(ev))
	}
	var next *Eviction
	if t := s.Decision.Reclaim; t != nil {
		e.Reclaim = &ReclaimView{Signal: t.Signal, Resource: s.Decision.Resource,
			NodeReclaimFirst: NodeReclaimable(t.Signal, s.DedicatedImageFs)}
		ev, ok := Choose(ChooseInput{Decision: s.Decision, Observations: s.Observations, Pods: s.Pods, Stats: s.Stats,
			DedicatedImageFs: s.DedicatedImageFs, MaxPodGracePeriod: s.MaxPodGracePeriod})
		if ok {
			v := evictionView(ev)
			e.Reclaim.Next, next = &v, &ev
		}
	}
	for _, sig := range rankedSignals(s.Thresholds) {
		e.Rankings = append(e.Rankings, rankingView(s, sig, next))
	}
	return e
}

// rankedSignals are the signals a threshold is set on, memory first, then
// by name, and memory.available even without a threshold.
func rankedSignals(ts []Threshold) []Signal {
	out := []Signal{SignalMemoryAvailable}
	for _, t := range ts {
		if !slices.Contains(out, t.Signal) {
			out = append(out, t.Signal)
		}
	}
	slices.SortFunc(out, func(a, b Signal) int {
		if c := memoryFirst(Threshold{Signal: a}) - memoryFirst(Threshold{Signal: b}); c != 0 {
			return c
		}
		return strings.Compare(string(a), string(b))
	})
	return out
}

func signalViews(obs Observations) []SignalView {
	out := make([]SignalView, 0, len(obs))
	for sig, o := range obs {
		out = append(out, SignalView{Signal: sig, Available: o.Available.String(), Capacity: o.Capacity.String(),
			AvailablePercent: percent(o.Available.Value(), o.Capacity.Value()), ObservedAt: stamp(o.Time)})
	}
	slices.SortFunc(out, func(a, b SignalView) int { return strings.Compare(string(a.Signal), string(b.Signal)) })
	return out
}

func thresholdViews(s Snapshot) []ThresholdView {
	met := ThresholdsMet(s.Thresholds, s.Observations, false)
	out := make([]ThresholdView, 0, len(s.Thresholds))
	for _, t := range s.Thresholds {
		v := ThresholdView{Signal: t.Signal, Kind: "soft", Value: t.Value.String(), GracePeriod: t.GracePeriod.String(),
			Status: StatusNotObserved}
		if t.Hard() {
			v.Kind = "hard"
		}
		if t.MinReclaim != nil {
			v.MinReclaim = t.MinReclaim.String()
		}
		o, observed := s.Observations[t.Signal]
		if observed {
			q := t.Value.Of(o.Capacity)
			left := o.Available.Value() - q.Value()
			v.Quantity = q.String()
			v.Left = resource.NewQuantity(left, q.Format).String()
			v.LeftPercent = percent(left, o.Capacity.Value())
			v.Met = slices.ContainsFunc(met, func(m Threshold) bool { return m.key() == t.key() })
			v.Status = thresholdStatus(s.Decision, t, v.Met)
		}
		if at, ok := s.Decision.Next.FirstMet[t.key()]; ok {
			v.Since = stamp(at)
			if rest := t.GracePeriod - s.At.Sub(at); rest > 0 {
				v.GraceRemaining = rest.String()
			}
		}
		out = append(out, v)
	}
	return out
}

// thresholdStatus is an observed threshold's status after the pass d.
func thresholdStatus(d Decision, t Threshold, met bool) string {
	_, tracked := d.Next.FirstMet[t.key()]
	graced := slices.ContainsFunc(d.Next.Met, func(m Threshold) bool { return m.key() == t.key() })
	switch {
	case !tracked:
		return StatusNotMet
	case !met:
		return StatusHeld
	case graced:
		return StatusMet
	}
	return StatusMetInGracePeriod
}

func conditionViews(d Decision) []ConditionView {
	var out []ConditionView
	for _, c := range []corev1.NodeConditionType{corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure} {
		v := ConditionView{Type: c, Status: corev1.ConditionFalse}
		if slices.Contains(d.Conditions, c) {
			v.Status = corev1.ConditionTrue
		}
		if at, ok := d.Next.ConditionSeen[c]; ok {
			v.LastObservedAt = stamp(at)
		}
		out = append(out, v)
	}
	return out
}

func evictionView(ev Eviction) EvictionView {
	return EvictionView{Pod: ev.Pod.Namespace + "/" + ev.Pod.Name, UID: string(ev.Pod.UID), Signal: ev.Signal,
		GracePeriodSeconds: ev.GracePeriod, Message: ev.Message}
}

// rankingView is RankPods for sig over the pass's pods, with the pod next
// evicted marked when sig is the one reclaimed.
func rankingView(s Snapshot, sig Signal, next *Eviction) RankingView {
	res := signals[sig].resource
	out := RankingView{Signal: sig, Resource: res, Pods: []RankedView{}}
	marked := next == nil || next.Signal != sig
	for i, r := range RankPods(s.Pods, s.Stats, sig, s.DedicatedImageFs) {
		v := RankedView{Position: i + 1, Pod: r.Pod.Namespace + "/" + r.Pod.Name, UID: string(r.Pod.UID),
			QOSClass: podutil.QOSClass(r.Pod), Priority: r.Priority, HasStats: r.HasStats,
			ExceedsRequests: r.ExceedsRequests, Critical: r.Critical}
		if r.HasStats {
			v.Usage = amount(res, r.Usage)
			if res != resourcePids {
				v.Request, v.AboveRequest = amount(res, r.Request), amount(res, r.AboveRequest)
			}
		}
		if !marked && r.Pod == next.Pod {
			v.Next, marked = true, true
		}
		v.Reason = rankReason(res, r, v)
		out.Pods = append(out.Pods, v)
	}
	return out
}

// rankReason says why a pod is where it is, in the order RankPods
// compares: stats, usage against request, priority, usage above request
// (for pids: priority, processes).
func rankReason(res corev1.ResourceName, r Ranked, v RankedView) string {
	var parts []string
	if r.Critical {
		parts = append(parts, "critical: never evicted")
	}
	switch {
	case !r.HasStats:
		parts = append(parts, "no stats: ranked first, as upstream", fmt.Sprintf("priority %d", r.Priority))
	case res == resourcePids:
		parts = append(parts, fmt.Sprintf("priority %d", r.Priority), fmt.Sprintf("%d processes", r.Usage))
	default:
		rel := "within"
		if r.ExceedsRequests {
			rel = "exceeds"
		}
		above := v.AboveRequest + " above its request"
		if r.AboveRequest < 0 {
			above = amount(res, -r.AboveRequest) + " below its request"
		}
		parts = append(parts, fmt.Sprintf("%s: %s usage %s %s its request %s", v.QOSClass, res, v.Usage, rel, v.Request),
			fmt.Sprintf("priority %d", r.Priority), above)
	}
	if v.Next {
		parts = append(parts, "evicted next for this signal")
	}
	return strings.Join(parts, "; ")
}

// amount formats a figure in its resource's unit: bytes in binary SI,
// inodes and processes as counts.
func amount(res corev1.ResourceName, v int64) string {
	if res == corev1.ResourceMemory || res == corev1.ResourceEphemeralStorage {
		return quantity(v).String()
	}
	return resource.NewQuantity(v, resource.DecimalSI).String()
}

// String is the value as evictionHard spells it.
func (v Value) String() string {
	if v.Quantity != nil {
		return v.Quantity.String()
	}
	return fmt.Sprintf("%g%%", math.Round(float64(v.Percentage)*10000)/100)
}

// percent is part of whole in percent, to a tenth.
func percent(part, whole int64) float64 {
	if whole == 0 {
		return 0
	}
	return math.Round(float64(part)*1000/float64(whole)) / 10
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
