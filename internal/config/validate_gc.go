package config

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
)

// ContainerGCPolicy is upstream's container GCPolicy, from the deprecated
// flags --minimum-container-ttl-duration (MinAge),
// --maximum-dead-containers-per-container (MaxPerPodContainer) and
// --maximum-dead-containers (MaxContainers); negative counts mean no
// limit.
type ContainerGCPolicy struct {
	MinAge             metav1.Duration `json:"minAge"`
	MaxPerPodContainer int             `json:"maxPerPodContainer"`
	MaxContainers      int             `json:"maxContainers"`
}

// containerGCPolicy reads the policy from the flags (upstream's defaults
// when they were not registered), refusing a negative minimum age as
// upstream's NewContainerGC does.
func containerGCPolicy(flags *Flags) (ContainerGCPolicy, []problem) {
	p := ContainerGCPolicy{MaxPerPodContainer: 1, MaxContainers: -1}
	if flags.fs == nil {
		return p, nil
	}
	var err error
	if p.MinAge.Duration, err = flags.fs.GetDuration("minimum-container-ttl-duration"); err != nil {
		panic(err) // registered by AddFlags with this type
	}
	perPod, err := flags.fs.GetInt32("maximum-dead-containers-per-container")
	if err != nil {
		panic(err)
	}
	total, err := flags.fs.GetInt32("maximum-dead-containers")
	if err != nil {
		panic(err)
	}
	p.MaxPerPodContainer, p.MaxContainers = int(perPod), int(total)
	if p.MinAge.Duration < 0 {
		return p, []problem{flagProblem("minimum-container-ttl-duration", "invalid minimum garbage collection age: %v", p.MinAge.Duration)}
	}
	return p, nil
}

// validateGC checks the image GC and container log fields as upstream's
// ValidateKubeletConfiguration does, and that containerLogMaxSize parses
// (upstream fails at startup otherwise).
func validateGC(kc *kubeletconfigv1beta1.KubeletConfiguration) []problem {
	var ps []problem
	high, low := ptr.Deref(kc.ImageGCHighThresholdPercent, 85), ptr.Deref(kc.ImageGCLowThresholdPercent, 80)
	if high < 0 || high > 100 {
		ps = append(ps, fieldProblem("imageGCHighThresholdPercent", "invalid value %d: must be between 0 and 100, inclusive", high))
	}
	if low < 0 || low > 100 {
		ps = append(ps, fieldProblem("imageGCLowThresholdPercent", "invalid value %d: must be between 0 and 100, inclusive", low))
	}
	if low >= high {
		ps = append(ps, fieldProblem("imageGCLowThresholdPercent", "invalid value %d: must be less than imageGCHighThresholdPercent %d", low, high))
	}
	minAge, maxAge := kc.ImageMinimumGCAge.Duration, kc.ImageMaximumGCAge.Duration
	if minAge < 0 {
		ps = append(ps, fieldProblem("imageMinimumGCAge", "invalid value %v: must not be negative", minAge))
	}
	if maxAge < 0 {
		ps = append(ps, fieldProblem("imageMaximumGCAge", "invalid value %v: must not be negative", maxAge))
	}
	if maxAge > 0 && maxAge <= minAge {
		ps = append(ps, fieldProblem("imageMaximumGCAge", "invalid value %v: must be greater than imageMinimumGCAge %v", maxAge, minAge))
	}
	if _, err := ParseContainerLogMaxSize(kc.ContainerLogMaxSize); err != nil {
		ps = append(ps, fieldProblem("containerLogMaxSize", "invalid value %q: %v", kc.ContainerLogMaxSize, err))
	}
	if n := ptr.Deref(kc.ContainerLogMaxFiles, 5); n <= 1 {
		ps = append(ps, fieldProblem("containerLogMaxFiles", "invalid value %d: must be greater than 1", n))
	}
	if n := ptr.Deref(kc.ContainerLogMaxWorkers, 1); n < 1 {
		ps = append(ps, fieldProblem("containerLogMaxWorkers", "invalid value %d: must be greater than or equal to 1", n))
	}
	if kc.ContainerLogMonitorInterval != nil && kc.ContainerLogMonitorInterval.Duration < 3*time.Second {
		ps = append(ps, fieldProblem("containerLogMonitorInterval", "invalid value %v: must be a positive time duration greater than or equal to 3s", kc.ContainerLogMonitorInterval.Duration))
	}
	return ps
}

// ParseContainerLogMaxSize parses containerLogMaxSize as upstream does: a
// resource quantity that fits in an int64 (negative turns rotation off).
func ParseContainerLogMaxSize(s string) (int64, error) {
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return 0, err
	}
	n, ok := q.AsInt64()
	if !ok {
		return 0, fmt.Errorf("invalid max log size")
	}
	return n, nil
}
