package config

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	logsapi "k8s.io/component-base/logs/api/v1"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
)

// Upstream default values that are referred to from more than one place.
const (
	// DefaultContainerRuntimeEndpoint is the upstream default CRI endpoint.
	DefaultContainerRuntimeEndpoint = "unix:///run/containerd/containerd.sock"
	// DefaultResolvConf is the upstream default resolvConf.
	DefaultResolvConf = "/etc/resolv.conf"
	// DefaultPodLogsDir is the upstream default podLogsDir.
	DefaultPodLogsDir = "/var/log/pods"
	// DefaultVolumePluginDir is the upstream default volumePluginDir.
	DefaultVolumePluginDir = "/usr/libexec/kubernetes/kubelet-plugins/volume/exec/"
	// maxContainerBackOff is the upstream crash loop back-off cap.
	maxContainerBackOff = 300 * time.Second
	// kubeletOOMScoreAdj is the upstream oomScoreAdj default for the kubelet.
	kubeletOOMScoreAdj = -999
)

// defaultEvictionHard returns the upstream Linux hard eviction thresholds
// (eviction.DefaultEvictionHard, pinned by TestDefaultsMatchUpstream),
// applied when evictionHard is not set (upstream does this in the loader).
func defaultEvictionHard() map[string]string {
	return map[string]string{
		"memory.available":   "100Mi",
		"nodefs.available":   "10%",
		"nodefs.inodesFree":  "5%",
		"imagefs.available":  "15%",
		"imagefs.inodesFree": "5%",
	}
}

// SetDefaults fills every unset field of kc with the upstream v1beta1 default
// for Kubernetes v1.37 (with that release's default feature gates), the same
// way upstream's SetDefaults_KubeletConfiguration and the config file loader
// do. It is idempotent.
func SetDefaults(kc *kubeletconfigv1beta1.KubeletConfiguration) {
	setServerDefaults(kc)
	setSourceDefaults(kc)
	setAPIDefaults(kc)
	setImageDefaults(kc)
	setResourceDefaults(kc)
	setEvictionDefaults(kc)
	setMiscDefaults(kc)
}

func defaultDuration(d *metav1.Duration, v time.Duration) {
	if d.Duration == 0 {
		d.Duration = v
	}
}

func defaultPtr[T any](p **T, v T) {
	if *p == nil {
		*p = ptr.To(v)
	}
}

func defaultString[T ~string](s *T, v T) {
	if *s == "" {
		*s = v
	}
}

func defaultInt[T int32 | int64](i *T, v T) {
	if *i == 0 {
		*i = v
	}
}

// setServerDefaults covers the kubelet API server, healthz and their auth.
func setServerDefaults(kc *kubeletconfigv1beta1.KubeletConfiguration) {
	defaultPtr(&kc.EnableServer, true)
	defaultString(&kc.Address, "0.0.0.0")
	defaultInt(&kc.Port, 10250)
	defaultPtr(&kc.Authentication.Anonymous.Enabled, false)
	defaultPtr(&kc.Authentication.Webhook.Enabled, true)
	defaultDuration(&kc.Authentication.Webhook.CacheTTL, 2*time.Minute)
	defaultString(&kc.Authorization.Mode, kubeletconfigv1beta1.KubeletAuthorizationModeWebhook)
	defaultDuration(&kc.Authorization.Webhook.CacheAuthorizedTTL, 5*time.Minute)
	defaultDuration(&kc.Authorization.Webhook.CacheUnauthorizedTTL, 30*time.Second)
	defaultPtr(&kc.EnableDebuggingHandlers, true)
	defaultPtr(&kc.HealthzPort, 10248)
	defaultString(&kc.HealthzBindAddress, "127.0.0.1")
	defaultDuration(&kc.StreamingConnectionIdleTimeout, 4*time.Hour)
	defaultPtr(&kc.EnableSystemLogHandler, true)
	defaultPtr(&kc.EnableProfilingHandler, true)
	defaultPtr(&kc.EnableDebugFlagsHandler, true)
}

// setSourceDefaults covers pod sources, the sync loop and the runtime.
func setSourceDefaults(kc *kubeletconfigv1beta1.KubeletConfiguration) {
	defaultDuration(&kc.SyncFrequency, time.Minute)
	defaultDuration(&kc.FileCheckFrequency, 20*time.Second)
	defaultDuration(&kc.HTTPCheckFrequency, 20*time.Second)
	defaultDuration(&kc.RuntimeRequestTimeout, 2*time.Minute)
	defaultString(&kc.ContainerRuntimeEndpoint, DefaultContainerRuntimeEndpoint)
	defaultString(&kc.PodLogsDir, DefaultPodLogsDir)
	defaultPtr(&kc.ResolverConfig, DefaultResolvConf)
	defaultString(&kc.HairpinMode, kubeletconfigv1beta1.PromiscuousBridge)
	defaultInt(&kc.MaxPods, 110)
	if kc.CrashLoopBackOff.MaxContainerRestartPeriod == nil {
		// KubeletCrashLoopBackOffMax is beta and on by default since v1.35.
		kc.CrashLoopBackOff.MaxContainerRestartPeriod = &metav1.Duration{Duration: maxContainerBackOff}
	}
}

// setAPIDefaults covers the API server client, node status and events.
func setAPIDefaults(kc *kubeletconfigv1beta1.KubeletConfiguration) {
	defaultPtr(&kc.EventRecordQPS, 50)
	defaultInt(&kc.EventBurst, 100)
	if kc.NodeStatusReportFrequency.Duration == 0 {
		// Upstream keeps backward compatibility: an explicit update
		// frequency is also the report frequency.
		if kc.NodeStatusUpdateFrequency.Duration == 0 {
			kc.NodeStatusReportFrequency.Duration = 5 * time.Minute
		} else {
			kc.NodeStatusReportFrequency = kc.NodeStatusUpdateFrequency
		}
	}
	defaultDuration(&kc.NodeStatusUpdateFrequency, 10*time.Second)
	defaultInt(&kc.NodeLeaseDurationSeconds, 40)
	defaultPtr(&kc.NodeStatusMaxImages, 50)
	defaultString(&kc.ContentType, "application/vnd.kubernetes.protobuf")
	defaultPtr(&kc.KubeAPIQPS, 50)
	defaultInt(&kc.KubeAPIBurst, 100)
	defaultString(&kc.ConfigMapAndSecretChangeDetectionStrategy, kubeletconfigv1beta1.WatchChangeDetectionStrategy)
	defaultPtr(&kc.EnableControllerAttachDetach, true)
	defaultPtr(&kc.RegisterNode, true)
}

// setImageDefaults covers image pulls, image GC and container logs.
func setImageDefaults(kc *kubeletconfigv1beta1.KubeletConfiguration) {
	defaultPtr(&kc.RegistryPullQPS, 5)
	defaultInt(&kc.RegistryBurst, 10)
	// KubeletEnsureSecretPulledImages is beta and on by default since v1.35.
	defaultString(&kc.ImagePullCredentialsVerificationPolicy, kubeletconfigv1beta1.NeverVerifyPreloadedImages)
	defaultDuration(&kc.ImageMinimumGCAge, 2*time.Minute)
	defaultPtr(&kc.ImageGCHighThresholdPercent, 85)
	defaultPtr(&kc.ImageGCLowThresholdPercent, 80)
	if kc.SerializeImagePulls == nil {
		// Parallel pulls are on when maxParallelImagePulls allows them.
		parallel := kc.MaxParallelImagePulls != nil && *kc.MaxParallelImagePulls >= 2
		kc.SerializeImagePulls = ptr.To(!parallel)
	}
	defaultString(&kc.ContainerLogMaxSize, "10Mi")
	defaultPtr(&kc.ContainerLogMaxFiles, 5)
	defaultPtr(&kc.ContainerLogMaxWorkers, 1)
	if kc.ContainerLogMonitorInterval == nil {
		kc.ContainerLogMonitorInterval = &metav1.Duration{Duration: 10 * time.Second}
	}
	defaultDuration(&kc.VolumeStatsAggPeriod, time.Minute)
	defaultString(&kc.VolumePluginDir, DefaultVolumePluginDir)
}

// setResourceDefaults covers cgroups, resource managers and limits.
func setResourceDefaults(kc *kubeletconfigv1beta1.KubeletConfiguration) {
	defaultPtr(&kc.OOMScoreAdj, kubeletOOMScoreAdj)
	defaultPtr(&kc.CgroupsPerQOS, true)
	defaultString(&kc.CgroupDriver, "cgroupfs")
	defaultString(&kc.CPUManagerPolicy, "none")
	defaultDuration(&kc.CPUManagerReconcilePeriod, 10*time.Second)
	defaultString(&kc.MemoryManagerPolicy, kubeletconfigv1beta1.NoneMemoryManagerPolicy)
	defaultString(&kc.TopologyManagerPolicy, kubeletconfigv1beta1.NoneTopologyManagerPolicy)
	defaultString(&kc.TopologyManagerScope, kubeletconfigv1beta1.ContainerTopologyManagerScope)
	if kc.PodPidsLimit == nil || *kc.PodPidsLimit < 0 {
		// Nil or negative means "no pod limit" (node allocatable applies).
		kc.PodPidsLimit = ptr.To[int64](-1)
	}
	defaultPtr(&kc.CPUCFSQuota, true)
	if kc.CPUCFSQuotaPeriod == nil {
		kc.CPUCFSQuotaPeriod = &metav1.Duration{Duration: 100 * time.Millisecond}
	}
	defaultInt(&kc.MaxOpenFiles, 1000000)
	if kc.EnforceNodeAllocatable == nil {
		kc.EnforceNodeAllocatable = []string{"pods"}
	}
	defaultString(&kc.MemoryReservationPolicy, kubeletconfigv1beta1.NoneMemoryReservationPolicy)
	defaultPtr(&kc.LocalStorageCapacityIsolation, true)
	defaultPtr(&kc.FailCgroupV1, true)
	defaultPtr(&kc.FailSwapOn, true)
	defaultPtr(&kc.SeccompDefault, false)
}

// setEvictionDefaults covers the eviction manager. As upstream's loader,
// an unset evictionHard takes the defaults, and with
// mergeDefaultEvictionSettings a set one gains the default thresholds of
// the signals it does not name.
func setEvictionDefaults(kc *kubeletconfigv1beta1.KubeletConfiguration) {
	if kc.EvictionHard == nil {
		kc.EvictionHard = defaultEvictionHard()
	} else if kc.MergeDefaultEvictionSettings != nil && *kc.MergeDefaultEvictionSettings {
		for k, v := range defaultEvictionHard() {
			if _, ok := kc.EvictionHard[k]; !ok {
				kc.EvictionHard[k] = v
			}
		}
	}
	defaultDuration(&kc.EvictionPressureTransitionPeriod, 5*time.Minute)
	defaultPtr(&kc.MergeDefaultEvictionSettings, false)
}

// setMiscDefaults covers the remaining fields: iptables and logging.
func setMiscDefaults(kc *kubeletconfigv1beta1.KubeletConfiguration) {
	defaultPtr(&kc.MakeIPTablesUtilChains, true)
	defaultPtr(&kc.IPTablesMasqueradeBit, 14)
	defaultPtr(&kc.IPTablesDropBit, 15)
	logsapi.SetRecommendedLoggingConfiguration(&kc.Logging)
}
