package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/berthk8s/berth/internal/podkit/cgroupmath"
)

// The gates of memory QoS and qosReserved, which berth honours either way
// (honouredGates), with their v1.37 defaults (featuregates_table.go; a
// test holds them to it).
const (
	gateMemoryQoS   = "MemoryQoS"
	gateQOSReserved = "QOSReserved"
	// previousDefaultMemoryThrottlingFactor is the factor a config file
	// may still carry with MemoryQoS off: upstream's default before v1.37.
	previousDefaultMemoryThrottlingFactor = 0.9
)

// Upstream's messages (ValidateKubeletConfiguration, less its "invalid
// configuration: " prefix; qosReserved's from its kubelet's run and
// cm.ParseQOSReserved), pinned by TestMemoryMessagesMatchUpstream.
const (
	msgFactorWithoutQoS = "memoryThrottlingFactor must not be set when MemoryQoS feature gate is disabled"
	msgFactorRange      = "memoryThrottlingFactor %v must be greater than 0 and less than or equal to 1.0"
	msgPolicyWithoutQoS = "memoryReservationPolicy %q requires MemoryQoS feature gate to be enabled"
	msgPolicyValues     = "option %q specified for memoryReservationPolicy. Valid options are %q or %q"
	msgSwapBehavior     = "memorySwap.swapBehavior %q must be one of: \"\", %q or %q"
	msgQOSReserved      = "--qos-reserved value failed to parse: %w"
	msgCannotReserve    = "cannot reserve %q resource"
	msgPercentage       = "failed to parse percentage %q for %q resource: %w"
)

// MemoryQoS reports the MemoryQoS gate (Beta, on by default in v1.37):
// with it, on cgroup v2, berth sets containers' and pods' memory.min,
// memory.low and memory.high as upstream.
func (c *Config) MemoryQoS() bool { return gateOn(&c.Kubelet, gateMemoryQoS) }

// QOSReservedMemory is qosReserved's memory percentage when the
// QOSReserved gate is on and qosReserved names memory; nil otherwise (as
// upstream, qosReserved without the gate has no effect). Load has
// validated it.
func (c *Config) QOSReservedMemory() *int64 {
	if !gateOn(&c.Kubelet, gateQOSReserved) {
		return nil
	}
	v, ok := c.Kubelet.QOSReserved[string(corev1.ResourceMemory)]
	if !ok {
		return nil
	}
	pct, err := parsePercentage(v)
	if err != nil {
		return nil
	}
	return &pct
}

// validateMemory checks memory QoS, swap and qosReserved with upstream's
// rules and messages (ValidateKubeletConfiguration, and qosReserved's
// parse at start). NodeSwap is GA and locked on, so memorySwap is always
// checked.
func validateMemory(kc *kubeletconfigv1beta1.KubeletConfiguration) []problem {
	var ps []problem
	qos := gateOn(kc, gateMemoryQoS)
	if f := kc.MemoryThrottlingFactor; f != nil {
		if !qos && *f != previousDefaultMemoryThrottlingFactor {
			ps = append(ps, fieldProblem("memoryThrottlingFactor", msgFactorWithoutQoS))
		}
		if *f <= 0 || *f > 1.0 {
			ps = append(ps, fieldProblem("memoryThrottlingFactor", msgFactorRange, *f))
		}
	}
	policy := kc.MemoryReservationPolicy
	if !qos && policy == kubeletconfigv1beta1.TieredReservationMemoryReservationPolicy {
		ps = append(ps, fieldProblem("memoryReservationPolicy", msgPolicyWithoutQoS, policy))
	}
	switch policy {
	case kubeletconfigv1beta1.NoneMemoryReservationPolicy, kubeletconfigv1beta1.TieredReservationMemoryReservationPolicy:
	default:
		ps = append(ps, fieldProblem("memoryReservationPolicy", msgPolicyValues,
			policy, kubeletconfigv1beta1.NoneMemoryReservationPolicy, kubeletconfigv1beta1.TieredReservationMemoryReservationPolicy))
	}
	switch b := kc.MemorySwap.SwapBehavior; b {
	case "", cgroupmath.NoSwap, cgroupmath.LimitedSwap:
	default:
		ps = append(ps, fieldProblem("memorySwap", msgSwapBehavior, b, cgroupmath.LimitedSwap, cgroupmath.NoSwap))
	}
	if err := checkQOSReserved(kc.QOSReserved); err != nil {
		ps = append(ps, fieldProblem("qosReserved", "%v", fmt.Errorf(msgQOSReserved, err)))
	}
	return ps
}

// checkQOSReserved is upstream's ParseQOSReserved: only memory may be
// reserved, as a percentage from 0 to 100.
func checkQOSReserved(m map[string]string) error {
	for k, v := range m {
		if corev1.ResourceName(k) != corev1.ResourceMemory {
			return fmt.Errorf(msgCannotReserve, k)
		}
		if _, err := parsePercentage(v); err != nil {
			return fmt.Errorf(msgPercentage, v, k, err)
		}
	}
	return nil
}

// parsePercentage is upstream's: "N%" with N from 0 to 100.
func parsePercentage(v string) (int64, error) {
	if !strings.HasSuffix(v, "%") {
		return 0, fmt.Errorf("percentage expected, got '%s'", v)
	}
	percentage, err := strconv.ParseInt(strings.TrimRight(v, "%"), 10, 0)
	if err != nil {
		return 0, fmt.Errorf("invalid number in percentage '%s'", v)
	}
	if percentage < 0 || percentage > 100 {
		return 0, errors.New("percentage must be between 0 and 100")
	}
	return percentage, nil
}
