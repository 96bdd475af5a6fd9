package config

import (
	"time"

	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// Settings are the values of the KubeletConfiguration's optional fields
// that the wings read, each as the file, drop-ins and flags set it or, left
// unset, at upstream's default as SetDefaults applies it: the one place a
// default is known, so no code outside this package restates one (archtest
// holds it).
type Settings struct {
	EnableServer bool
	Server       ServerSettings
	Logs         LogSettings
	// ImageGCHighThresholdPercent and ImageGCLowThresholdPercent bound the
	// image GC's disk usage.
	ImageGCHighThresholdPercent, ImageGCLowThresholdPercent int
	CgroupsPerQOS                                           bool
	PodPidsLimit                                            int64
	CPUCFSQuota                                             bool
	CPUCFSQuotaPeriod                                       time.Duration
	// MaxContainerRestartPeriod is crashLoopBackOff's.
	MaxContainerRestartPeriod time.Duration
	ResolverConfig            string
	SeccompDefault            bool
	RegistryPullQPS           float32
	RegistryBurst             int
	MakeIPTablesUtilChains    bool
	// OOMScoreAdj is berth's own OOM score adjustment.
	OOMScoreAdj int32
}

// ServerSettings are the kubelet API's optional handlers and its
// authentication switches.
type ServerSettings struct {
	DebuggingHandlers, SystemLogHandler, ProfilingHandler, DebugFlagsHandler, SystemLogQuery bool
	AnonymousAuth, WebhookAuthn                                                              bool
}

// LogSettings are the container log rotation's.
type LogSettings struct {
	MaxFiles, MaxWorkers int
}

// Settings resolves the configuration's settings (SettingsOf).
func (c *Config) Settings() Settings { return SettingsOf(&c.Kubelet) }

// SettingsOf resolves kc's settings over a defaulted copy, so that a
// configuration Load returned (already defaulted) and one built by hand
// read the same. kc is not changed.
func SettingsOf(kc *kubeletconfigv1beta1.KubeletConfiguration) Settings {
	d := kc.DeepCopy()
	SetDefaults(d)
	var restart time.Duration
	if d.CrashLoopBackOff.MaxContainerRestartPeriod != nil {
		restart = d.CrashLoopBackOff.MaxContainerRestartPeriod.Duration
	}
	return Settings{
		EnableServer: *d.EnableServer,
		Server: ServerSettings{
			DebuggingHandlers: *d.EnableDebuggingHandlers, SystemLogHandler: *d.EnableSystemLogHandler,
			ProfilingHandler: *d.EnableProfilingHandler, DebugFlagsHandler: *d.EnableDebugFlagsHandler,
			SystemLogQuery: d.EnableSystemLogQuery != nil && *d.EnableSystemLogQuery,
			AnonymousAuth:  *d.Authentication.Anonymous.Enabled, WebhookAuthn: *d.Authentication.Webhook.Enabled,
		},
		Logs:                        LogSettings{MaxFiles: int(*d.ContainerLogMaxFiles), MaxWorkers: int(*d.ContainerLogMaxWorkers)},
		ImageGCHighThresholdPercent: int(*d.ImageGCHighThresholdPercent),
		ImageGCLowThresholdPercent:  int(*d.ImageGCLowThresholdPercent),
		CgroupsPerQOS:               *d.CgroupsPerQOS,
		PodPidsLimit:                *d.PodPidsLimit,
		CPUCFSQuota:                 *d.CPUCFSQuota,
		CPUCFSQuotaPeriod:           d.CPUCFSQuotaPeriod.Duration,
		MaxContainerRestartPeriod:   restart,
		ResolverConfig:              *d.ResolverConfig,
		SeccompDefault:              *d.SeccompDefault,
		RegistryPullQPS:             float32(*d.RegistryPullQPS),
		RegistryBurst:               int(d.RegistryBurst),
		MakeIPTablesUtilChains:      *d.MakeIPTablesUtilChains,
		OOMScoreAdj:                 *d.OOMScoreAdj,
	}
}
