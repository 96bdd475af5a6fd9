package config

import (
	"path/filepath"
	"time"
	"unicode"

	"github.com/blang/semver/v4"
	metricsapi "k8s.io/component-base/metrics/api/v1"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
)

// validateNode checks, as upstream v1.37's validation does and with its
// wording, podLogsDir, runOnce, the iptables bits,
// showHiddenMetricsForVersion and enableSystemLogQuery.
func validateNode(kc *kubeletconfigv1beta1.KubeletConfiguration) []problem {
	var ps []problem
	ps = append(ps, validatePodLogsDir(kc.PodLogsDir)...)
	// Upstream v1.37 has no run-once mode any more: its validation refuses
	// runOnce (and --runonce) true.
	if kc.RunOnce {
		ps = append(ps, fieldProblem("runOnce", "invalid value true: Runonce mode has been deprecated and should not be set (upstream v1.37 refuses it)"))
	}
	for _, b := range []struct {
		name string
		bit  *int32
	}{{"iptablesMasqueradeBit", kc.IPTablesMasqueradeBit}, {"iptablesDropBit", kc.IPTablesDropBit}} {
		if b.bit != nil && (*b.bit < 0 || *b.bit > 31) {
			ps = append(ps, fieldProblem(b.name, "invalid value %d: must be between 0 and 31, inclusive", *b.bit))
		}
	}
	if err := validateShowHiddenMetrics(kc.ShowHiddenMetricsForVersion); err != nil {
		ps = append(ps, fieldProblem("showHiddenMetricsForVersion", "%v", err))
	}
	// NodeLogQuery, which upstream also requires, is GA and locked on:
	// validateFeatureGates refuses it off.
	if ptr.Deref(kc.EnableSystemLogQuery, false) && (kc.EnableSystemLogHandler == nil || !*kc.EnableSystemLogHandler) {
		ps = append(ps, fieldProblem("enableSystemLogQuery", "enableSystemLogHandler is required"))
	}
	return ps
}

// validatePodLogsDir checks podLogsDir as upstream does (absolute,
// normalized, ASCII, because it labels metrics) and refuses "/", which
// upstream accepts: berth's housekeeping removes the orphaned pod log
// directories it finds there, so the host's root must never be it.
func validatePodLogsDir(dir string) []problem {
	var ps []problem
	switch {
	case dir == "":
		return []problem{fieldProblem("podLogsDir", "must be specified")}
	case !filepath.IsAbs(dir):
		ps = append(ps, fieldProblem("podLogsDir", "invalid value %q: must be an absolute path", dir))
	case filepath.Clean(dir) != dir:
		ps = append(ps, fieldProblem("podLogsDir", "invalid value %q: must be normalized", dir))
	case dir == "/":
		ps = append(ps, fieldProblem("podLogsDir", "invalid value %q: must not be the root directory (berth's choice: upstream accepts it)", dir))
	}
	for _, c := range dir {
		if c > unicode.MaxASCII {
			ps = append(ps, fieldProblem("podLogsDir", "invalid value %q: must contain ASCII characters only", dir))
			break
		}
	}
	return ps
}

// DefaultHousekeepingInterval is upstream's --housekeeping-interval
// default (pkg/kubelet/cadvisor's defaultHousekeepingInterval).
const DefaultHousekeepingInterval = 10 * time.Second

// housekeepingInterval reads --housekeeping-interval. cAdvisor takes any
// duration; berth refuses one that is not positive, which would sample
// without pause.
func housekeepingInterval(flags *Flags) (time.Duration, []problem) {
	if flags.fs == nil {
		return DefaultHousekeepingInterval, nil
	}
	d, err := flags.fs.GetDuration("housekeeping-interval")
	if err != nil {
		panic(err) // registered by AddFlags with this type
	}
	if d <= 0 {
		return 0, []problem{flagProblem("housekeeping-interval", "invalid value %q: must be positive", d)}
	}
	return d, nil
}

// validateShowHiddenMetrics accepts "" or the previous minor version, with
// component-base's validation, relative to KubernetesVersion (berth's own
// build version is not a Kubernetes one).
func validateShowHiddenMetrics(v string) error {
	return metricsapi.ValidateShowHiddenMetricsVersionForKubeletBackwardCompatOnly(semver.MustParse(KubernetesVersion[1:]), v)
}
