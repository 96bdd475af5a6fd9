package config

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
)

// TestSettingsOf: an empty configuration reads upstream's defaults (those
// SetDefaults applies), a set field reads its value, and the configuration
// itself is not changed.
func TestSettingsOf(t *testing.T) {
	defaults := Settings{
		EnableServer: true,
		Server: ServerSettings{DebuggingHandlers: true, SystemLogHandler: true, ProfilingHandler: true, DebugFlagsHandler: true,
			WebhookAuthn: true},
		Logs:                        LogSettings{MaxFiles: 5, MaxWorkers: 1},
		ImageGCHighThresholdPercent: 85, ImageGCLowThresholdPercent: 80,
		CgroupsPerQOS: true, PodPidsLimit: -1, CPUCFSQuota: true, CPUCFSQuotaPeriod: 100 * time.Millisecond,
		MaxContainerRestartPeriod: 300 * time.Second, ResolverConfig: DefaultResolvConf,
		RegistryPullQPS: 5, RegistryBurst: 10, MakeIPTablesUtilChains: true, OOMScoreAdj: -999,
	}
	empty := &kubeletconfigv1beta1.KubeletConfiguration{}
	if diff := cmp.Diff(defaults, SettingsOf(empty)); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(&kubeletconfigv1beta1.KubeletConfiguration{}, empty); diff != "" {
		t.Errorf("SettingsOf changed its input:\n%s", diff)
	}
	set := &kubeletconfigv1beta1.KubeletConfiguration{
		EnableServer: ptr.To(false), EnableSystemLogQuery: ptr.To(true), ResolverConfig: ptr.To(""),
		RegistryPullQPS: ptr.To[int32](0), RegistryBurst: 3, PodPidsLimit: ptr.To[int64](100),
		CrashLoopBackOff: kubeletconfigv1beta1.CrashLoopBackOffConfig{MaxContainerRestartPeriod: &metav1.Duration{Duration: time.Minute}},
	}
	set.Authentication.Webhook.Enabled = ptr.To(false)
	want := defaults
	want.EnableServer, want.Server.SystemLogQuery, want.Server.WebhookAuthn, want.ResolverConfig = false, true, false, ""
	want.RegistryPullQPS, want.RegistryBurst, want.PodPidsLimit, want.MaxContainerRestartPeriod = 0, 3, 100, time.Minute
	if diff := cmp.Diff(want, SettingsOf(set)); diff != "" {
		t.Errorf("set fields (-want +got):\n%s", diff)
	}
}
