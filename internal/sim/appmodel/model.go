package appmodel

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Prefix is the annotations' prefix.
const Prefix = "sim.berth.dev/"

// The annotation names, after Prefix.
const (
	KeyReadyAfter        = "ready-after"
	KeyStartedAfter      = "started-after"
	KeyLivenessFailAfter = "liveness-fail-after"
	KeyRunFor            = "run-for"
	KeyExitCode          = "exit-code"
	KeyMemory            = "memory"
	KeyMemoryPerMinute   = "memory-per-minute"
)

// Behaviour is what one container does. The zero value is the default:
// started and ready at once, always live, runs for ever, uses no memory.
type Behaviour struct {
	ReadyAfter   time.Duration
	StartedAfter time.Duration
	// LivenessFailAfter is when liveness probes start failing; 0: never.
	LivenessFailAfter time.Duration
	// RunFor is when the container exits; 0: never.
	RunFor   time.Duration
	ExitCode int32
	// Memory is the use at start, MemoryPerMinute its growth, in bytes.
	Memory          int64
	MemoryPerMinute int64
}

// Probe is the kind of probe asked.
type Probe int

const (
	Readiness Probe = iota
	Liveness
	Startup
)

// Parse reads container's behaviour from its pod's annotations. The
// error joins every value that did not parse; those are left at their
// defaults, the others apply.
func Parse(annotations map[string]string, container string) (Behaviour, error) {
	var b Behaviour
	var errs []error
	value := func(key string) (string, bool) {
		if v, ok := annotations[Prefix+key+"."+container]; ok {
			return v, true
		}
		v, ok := annotations[Prefix+key]
		return v, ok
	}
	durations := []struct {
		key string
		to  *time.Duration
	}{
		{KeyReadyAfter, &b.ReadyAfter}, {KeyStartedAfter, &b.StartedAfter},
		{KeyLivenessFailAfter, &b.LivenessFailAfter}, {KeyRunFor, &b.RunFor},
	}
	for _, d := range durations {
		v, ok := value(d.key)
		if !ok {
			continue
		}
		parsed, err := time.ParseDuration(v)
		if err == nil && parsed < 0 {
			err = errors.New("negative")
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("annotation %s%s %q: %w", Prefix, d.key, v, err))
			continue
		}
		*d.to = parsed
	}
	if v, ok := value(KeyExitCode); ok {
		code, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			errs = append(errs, fmt.Errorf("annotation %s%s %q: %w", Prefix, KeyExitCode, v, err))
		} else {
			b.ExitCode = int32(code)
		}
	}
	quantities := []struct {
		key string
		to  *int64
	}{{KeyMemory, &b.Memory}, {KeyMemoryPerMinute, &b.MemoryPerMinute}}
	for _, q := range quantities {
		v, ok := value(q.key)
		if !ok {
			continue
		}
		parsed, err := resource.ParseQuantity(v)
		if err == nil && parsed.Sign() < 0 {
			err = errors.New("negative")
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("annotation %s%s %q: %w", Prefix, q.key, v, err))
			continue
		}
		*q.to = parsed.Value()
	}
	return b, errors.Join(errs...)
}

// Answer is what the container answers a probe of kind p at age: ok, and
// the output a failure's event shows.
func (b Behaviour) Answer(p Probe, age time.Duration) (ok bool, output string) {
	switch p {
	case Readiness:
		if age < b.ReadyAfter {
			return false, fmt.Sprintf("not ready until %s after start", b.ReadyAfter)
		}
	case Startup:
		if age < b.StartedAfter {
			return false, fmt.Sprintf("not started until %s after start", b.StartedAfter)
		}
	case Liveness:
		if b.LivenessFailAfter > 0 && age >= b.LivenessFailAfter {
			return false, fmt.Sprintf("unhealthy from %s after start", b.LivenessFailAfter)
		}
	}
	return true, ""
}

// Exit reports whether the container has exited by age, and with which
// code.
func (b Behaviour) Exit(age time.Duration) (exited bool, code int32) {
	if b.RunFor > 0 && age >= b.RunFor {
		return true, b.ExitCode
	}
	return false, 0
}

// MemoryAt is the container's memory use at age, in bytes.
func (b Behaviour) MemoryAt(age time.Duration) uint64 {
	if age < 0 {
		age = 0
	}
	use := b.Memory + int64(float64(b.MemoryPerMinute)*age.Minutes())
	if use < 0 { // overflow
		return 0
	}
	return uint64(use)
}
