package eviction

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Signal is an eviction signal, named as in evictionHard's keys.
type Signal string

// The signals berth observes (upstream's evictionapi.Signal* values).
const (
	SignalMemoryAvailable            Signal = "memory.available"
	SignalAllocatableMemoryAvailable Signal = "allocatableMemory.available"
	SignalNodeFsAvailable            Signal = "nodefs.available"
	SignalNodeFsInodesFree           Signal = "nodefs.inodesFree"
	SignalImageFsAvailable           Signal = "imagefs.available"
	SignalImageFsInodesFree          Signal = "imagefs.inodesFree"
	SignalContainerFsAvailable       Signal = "containerfs.available"
	SignalContainerFsInodesFree      Signal = "containerfs.inodesFree"
	SignalPIDAvailable               Signal = "pid.available"
)

// Resources a signal reclaims besides corev1's (upstream's resourceInodes
// and resourcePids).
const (
	resourceInodes corev1.ResourceName = "inodes"
	resourcePids   corev1.ResourceName = "pids"
)

// signalInfo is what upstream's signalToNodeCondition and signalToResource
// say of one signal. One table: a signal is valid when it is in it.
type signalInfo struct {
	condition corev1.NodeConditionType
	resource  corev1.ResourceName
}

// signals is upstream's helpers.go init() tables.
var signals = map[Signal]signalInfo{
	SignalMemoryAvailable:            {corev1.NodeMemoryPressure, corev1.ResourceMemory},
	SignalAllocatableMemoryAvailable: {corev1.NodeMemoryPressure, corev1.ResourceMemory},
	SignalNodeFsAvailable:            {corev1.NodeDiskPressure, corev1.ResourceEphemeralStorage},
	SignalNodeFsInodesFree:           {corev1.NodeDiskPressure, resourceInodes},
	SignalImageFsAvailable:           {corev1.NodeDiskPressure, corev1.ResourceEphemeralStorage},
	SignalImageFsInodesFree:          {corev1.NodeDiskPressure, resourceInodes},
	SignalContainerFsAvailable:       {corev1.NodeDiskPressure, corev1.ResourceEphemeralStorage},
	SignalContainerFsInodesFree:      {corev1.NodeDiskPressure, resourceInodes},
	SignalPIDAvailable:               {corev1.NodePIDPressure, resourcePids},
}

// Value is a threshold's amount: a quantity, or a fraction (0..1] of the
// signal's capacity when Quantity is nil.
type Value struct {
	Quantity   *resource.Quantity
	Percentage float32
}

// Of is the value's quantity for a signal whose capacity is capacity
// (upstream's GetThresholdQuantity).
func (v Value) Of(capacity resource.Quantity) resource.Quantity {
	if v.Quantity != nil {
		return v.Quantity.DeepCopy()
	}
	return *resource.NewQuantity(int64(float64(capacity.Value())*float64(v.Percentage)), resource.BinarySI)
}

// Threshold is one eviction threshold: the signal is met when its
// available amount is below Value (the only operator upstream has, "<").
// GracePeriod zero is a hard threshold.
type Threshold struct {
	Signal      Signal
	Value       Value
	GracePeriod time.Duration
	MinReclaim  *Value
}

// Hard reports whether t is a hard threshold (no grace period).
func (t Threshold) Hard() bool { return t.GracePeriod == 0 }

// key identifies a threshold across passes (a soft and a hard threshold on
// the same signal are distinct).
func (t Threshold) key() string { return fmt.Sprintf("%s/%d", t.Signal, t.GracePeriod) }

// Settings are the KubeletConfiguration fields the thresholds come from.
type Settings struct {
	Hard, Soft, SoftGracePeriod, MinimumReclaim map[string]string
	// EnforceNodeAllocatable: "pods" in it adds an allocatableMemory.available
	// threshold copying every hard memory.available one, as upstream.
	EnforceNodeAllocatable []string
}

// ParseThresholds parses the thresholds as upstream's ParseThresholdConfig:
// quantities or percentages ("0%" and "100%" are ignored), every soft
// threshold needs a grace period, minimum reclaims attach to every
// threshold of their signal. The result is sorted by signal then grace
// period, so it does not depend on map order.
func ParseThresholds(s Settings) ([]Threshold, error) {
	hard, err := parseStatements(s.Hard)
	if err != nil {
		return nil, err
	}
	soft, err := parseStatements(s.Soft)
	if err != nil {
		return nil, err
	}
	grace, err := parseGracePeriods(s.SoftGracePeriod)
	if err != nil {
		return nil, err
	}
	reclaim, err := parseMinimumReclaims(s.MinimumReclaim)
	if err != nil {
		return nil, err
	}
	for i := range soft {
		p, ok := grace[soft[i].Signal]
		if !ok {
			return nil, fmt.Errorf("grace period must be specified for the soft eviction threshold %v", soft[i].Signal)
		}
		soft[i].GracePeriod = p
	}
	out := append(hard, soft...)
	for i := range out {
		if r, ok := reclaim[out[i].Signal]; ok {
			out[i].MinReclaim = &r
		}
	}
	if slices.Contains(s.EnforceNodeAllocatable, "pods") {
		for _, t := range out {
			if t.Signal == SignalMemoryAvailable && t.Hard() {
				out = append(out, Threshold{Signal: SignalAllocatableMemoryAvailable, Value: t.Value, MinReclaim: t.MinReclaim})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b Threshold) int {
		if c := strings.Compare(string(a.Signal), string(b.Signal)); c != 0 {
			return c
		}
		return int(a.GracePeriod - b.GracePeriod)
	})
	return out, nil
}

func validSignal(s string) (Signal, error) {
	if _, ok := signals[Signal(s)]; !ok {
		return "", fmt.Errorf("unsupported eviction signal %v", s)
	}
	return Signal(s), nil
}

func parseStatements(m map[string]string) ([]Threshold, error) {
	var out []Threshold
	for k, v := range m {
		sig, err := validSignal(k)
		if err != nil {
			return nil, err
		}
		t, ok, err := parseStatement(sig, v)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, t)
		}
	}
	return out, nil
}

// parseStatement parses one threshold; ok is false for "0%" and "100%",
// which upstream ignores.
func parseStatement(sig Signal, v string) (t Threshold, ok bool, err error) {
	if strings.HasSuffix(v, "%") {
		if v == "0%" || v == "100%" {
			return Threshold{}, false, nil
		}
		p, err := parsePercentage(v)
		if err != nil {
			return Threshold{}, false, err
		}
		if p < 0 {
			return Threshold{}, false, fmt.Errorf("eviction percentage threshold %v must be >= 0%%: %s", sig, v)
		}
		if p > 1 {
			return Threshold{}, false, fmt.Errorf("eviction percentage threshold %v must be <= 100%%: %s", sig, v)
		}
		return Threshold{Signal: sig, Value: Value{Percentage: p}}, true, nil
	}
	q, err := resource.ParseQuantity(v)
	if err != nil {
		return Threshold{}, false, fmt.Errorf("parse eviction threshold %v: %w", sig, err)
	}
	if q.Sign() <= 0 {
		return Threshold{}, false, fmt.Errorf("eviction threshold %v must be positive: %s", sig, &q)
	}
	return Threshold{Signal: sig, Value: Value{Quantity: &q}}, true, nil
}

func parsePercentage(v string) (float32, error) {
	f, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 32)
	if err != nil {
		return 0, fmt.Errorf("parse percentage %q: %w", v, err)
	}
	return float32(f) / 100, nil
}

func parseGracePeriods(m map[string]string) (map[Signal]time.Duration, error) {
	out := map[Signal]time.Duration{}
	for k, v := range m {
		sig, err := validSignal(k)
		if err != nil {
			return nil, err
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			return nil, fmt.Errorf("parse eviction grace period %v: %w", sig, err)
		}
		if d < 0 {
			return nil, fmt.Errorf("invalid eviction grace period specified: %v, must be a positive value", v)
		}
		out[sig] = d
	}
	return out, nil
}

func parseMinimumReclaims(m map[string]string) (map[Signal]Value, error) {
	out := map[Signal]Value{}
	for k, v := range m {
		sig, err := validSignal(k)
		if err != nil {
			return nil, err
		}
		if strings.HasSuffix(v, "%") {
			p, err := parsePercentage(v)
			if err != nil {
				return nil, err
			}
			if p <= 0 {
				return nil, fmt.Errorf("eviction percentage minimum reclaim %v must be positive: %s", sig, v)
			}
			out[sig] = Value{Percentage: p}
			continue
		}
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return nil, fmt.Errorf("parse eviction minimum reclaim %v: %w", sig, err)
		}
		if q.Sign() < 0 {
			return nil, fmt.Errorf("negative eviction minimum reclaim specified for %v", sig)
		}
		out[sig] = Value{Quantity: &q}
	}
	return out, nil
}

// WithContainerFs sets the containerfs thresholds as upstream's
// UpdateContainerFsThresholds: the container filesystem is the image
// filesystem when that one is dedicated (berth's runtimes do not split
// containers from images), else the node's, and its thresholds copy that
// filesystem's, replacing any containerfs thresholds given.
func WithContainerFs(ts []Threshold, dedicatedImageFs bool) []Threshold {
	bytes, inodes := SignalNodeFsAvailable, SignalNodeFsInodesFree
	if dedicatedImageFs {
		bytes, inodes = SignalImageFsAvailable, SignalImageFsInodesFree
	}
	var out, copies []Threshold
	for _, t := range ts {
		switch t.Signal {
		case SignalContainerFsAvailable, SignalContainerFsInodesFree:
			continue
		case bytes:
			c := t
			c.Signal = SignalContainerFsAvailable
			copies = append(copies, c)
		case inodes:
			c := t
			c.Signal = SignalContainerFsInodesFree
			copies = append(copies, c)
		}
		out = append(out, t)
	}
	return append(out, copies...)
}
