package config

import (
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
	logsapi "k8s.io/component-base/logs/api/v1"
	_ "k8s.io/component-base/logs/json/register" // logging.format json, as upstream's kubelet
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/podkit/sysctl"
)

// validateSettings checks the node settings that upstream validates and
// berth honours: logging, image pull concurrency, hairpinMode, oomScoreAdj
// and cpuCFSQuotaPeriod. The container manager's fields (cgroupRoot among them) are
// validateCgroups'.
func validateSettings(kc *kubeletconfigv1beta1.KubeletConfiguration) []problem {
	var ps []problem
	ps = append(ps, validateLogging(&kc.Logging, kc.FeatureGates)...)
	if n := kc.MaxParallelImagePulls; n != nil && *n < 1 {
		ps = append(ps, fieldProblem("maxParallelImagePulls", "invalid value %d: must be a positive number", *n))
	}
	if ptr.Deref(kc.SerializeImagePulls, true) && ptr.Deref(kc.MaxParallelImagePulls, 1) > 1 {
		ps = append(ps, fieldProblem("maxParallelImagePulls", "invalid value %d: cannot be larger than 1 unless serializeImagePulls (--serialize-image-pulls) is false", *kc.MaxParallelImagePulls))
	}
	switch kc.HairpinMode {
	case kubeletconfigv1beta1.PromiscuousBridge, kubeletconfigv1beta1.HairpinVeth, kubeletconfigv1beta1.HairpinNone:
	default:
		ps = append(ps, fieldProblem("hairpinMode", "invalid value %q: must be %q, %q or %q",
			kc.HairpinMode, kubeletconfigv1beta1.HairpinNone, kubeletconfigv1beta1.HairpinVeth, kubeletconfigv1beta1.PromiscuousBridge))
	}
	if adj := ptr.Deref(kc.OOMScoreAdj, 0); adj < -1000 || adj > 1000 {
		ps = append(ps, fieldProblem("oomScoreAdj", "invalid value %d: must be between -1000 and 1000, inclusive", adj))
	}
	// Upstream checks the period when CustomCPUCFSQuotaPeriod is on (and
	// refuses another than 100ms when it is off); berth refuses the gate
	// off, so it is always on here.
	if p := kc.CPUCFSQuotaPeriod; p != nil && (p.Duration < time.Millisecond || p.Duration > time.Second) {
		ps = append(ps, fieldProblem("cpuCFSQuotaPeriod", "invalid value %q: must be between 1ms and 1sec, inclusive", p.Duration.String()))
	}
	ps = append(ps, validateUserNamespaces(kc.UserNamespaces)...)
	ps = append(ps, validateTracing(kc.Tracing)...)
	return append(ps, validateDefaultPodSysctls(kc)...)
}

// validateDefaultPodSysctls checks defaultPodSysctls as upstream: only
// with the DefaultPodSysctls gate, and each a valid, namespaced sysctl
// given once.
func validateDefaultPodSysctls(kc *kubeletconfigv1beta1.KubeletConfiguration) []problem {
	if len(kc.DefaultPodSysctls) == 0 {
		return nil
	}
	if !gateOn(kc, "DefaultPodSysctls") {
		return []problem{fieldProblem("defaultPodSysctls", "the DefaultPodSysctls feature gate is required")}
	}
	var ps []problem
	_, errs := sysctl.ParseDefaults(kc.DefaultPodSysctls)
	for _, err := range errs {
		ps = append(ps, fieldProblem("defaultPodSysctls", "%v", err))
	}
	return ps
}

// validateLogging validates logging as upstream's kubelet does, with
// component-base's logs API and the logging feature gates given.
func validateLogging(c *logsapi.LoggingConfiguration, gates map[string]bool) []problem {
	fg, err := loggingGates(gates)
	if err != nil {
		return []problem{fieldProblem("logging", "%v", err)}
	}
	var ps []problem
	for _, e := range logsapi.Validate(c, fg, field.NewPath("logging")) {
		ps = append(ps, fieldProblem(e.Field, "%s", e.ErrorBody()))
	}
	return ps
}

// ImagePullLimit is how many image pulls may run at once, as upstream's
// image puller decides it: 1 with serializeImagePulls, else
// maxParallelImagePulls, 0 (no bound) when that is unset.
func (c *Config) ImagePullLimit() int {
	if ptr.Deref(c.Kubelet.SerializeImagePulls, true) {
		return 1
	}
	return int(ptr.Deref(c.Kubelet.MaxParallelImagePulls, 0))
}
