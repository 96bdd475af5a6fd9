package config

import (
	"k8s.io/apimachinery/pkg/api/resource"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/cpuset"

	"github.com/berthk8s/berth/internal/node/cpumanager"
	"github.com/berthk8s/berth/internal/node/topology"
)

// validateCPUManager checks the CPU manager's fields at load, where
// upstream's NewManager checks them at start: the policy's name, its
// options (internal/node/cpumanager.ParseOptions, with their gates), the
// static policy's need of reserved CPUs and a reconcile period. It returns
// the parsed options for the static policy (nil otherwise).
func validateCPUManager(kc *kubeletconfigv1beta1.KubeletConfiguration) (*cpumanager.Options, []problem) {
	switch kc.CPUManagerPolicy {
	case cpumanager.PolicyNone:
		if len(kc.CPUManagerPolicyOptions) > 0 {
			return nil, []problem{fieldProblem("cpuManagerPolicyOptions", "None policy: received unsupported options=%v", kc.CPUManagerPolicyOptions)}
		}
		return nil, nil
	case cpumanager.PolicyStatic:
	default:
		return nil, []problem{fieldProblem("cpuManagerPolicy", "unknown policy: %q (must be %q or %q)", kc.CPUManagerPolicy, cpumanager.PolicyNone, cpumanager.PolicyStatic)}
	}
	var ps []problem
	opts, err := cpumanager.ParseOptions(kc.CPUManagerPolicyOptions, topology.Gates{
		AlphaOptions: gateOn(kc, "CPUManagerPolicyAlphaOptions"),
		BetaOptions:  gateOn(kc, "CPUManagerPolicyBetaOptions"),
	})
	if err != nil {
		ps = append(ps, fieldProblem("cpuManagerPolicyOptions", "%v", err))
	}
	if reservedCPUMillis(kc) <= 0 {
		ps = append(ps, fieldProblem("cpuManagerPolicy", "[cpumanager] the static policy requires systemreserved.cpu + kubereserved.cpu to be greater than zero"))
	}
	if kc.CPUManagerReconcilePeriod.Duration <= 0 {
		ps = append(ps, fieldProblem("cpuManagerReconcilePeriod", "must be greater than 0 with the static policy"))
	}
	return &opts, ps
}

// reservedCPUMillis is the cpu systemReserved and kubeReserved hold, as
// the static policy counts it: reservedSystemCPUs' count when given
// (applyReservedCPUs makes it systemReserved's), else their sum.
func reservedCPUMillis(kc *kubeletconfigv1beta1.KubeletConfiguration) int64 {
	if cpus, err := cpuset.Parse(kc.ReservedSystemCPUs); err == nil && cpus.Size() > 0 {
		return int64(cpus.Size()) * 1000
	}
	var sum int64
	for _, m := range []map[string]string{kc.SystemReserved, kc.KubeReserved} {
		if q, err := resource.ParseQuantity(m["cpu"]); err == nil {
			sum += q.MilliValue()
		}
	}
	return sum
}

// NumReservedCPUs is the number of CPUs the static policy reserves:
// upstream's ceil of the cpu systemReserved and kubeReserved hold.
func (c *Config) NumReservedCPUs() int {
	return int((reservedCPUMillis(&c.Kubelet) + 999) / 1000)
}
