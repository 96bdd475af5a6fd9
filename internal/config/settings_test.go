package config

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/klog/v2"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
)

// problemMsgs returns the messages of ps.
func problemMsgs(ps []problem) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.msg)
	}
	return out
}

func TestValidateSettings(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(kc *kubeletconfigv1beta1.KubeletConfiguration)
		want   []string
	}{
		{name: "defaults"},
		{name: "serialized pulls", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) {
			kc.SerializeImagePulls = ptr.To(true)
			kc.MaxParallelImagePulls = ptr.To[int32](1)
		}},
		{name: "parallel pulls bounded", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) {
			kc.SerializeImagePulls = ptr.To(false)
			kc.MaxParallelImagePulls = ptr.To[int32](5)
		}},
		{name: "parallel bound needs serializeImagePulls false", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) {
			kc.MaxParallelImagePulls = ptr.To[int32](5)
		}, want: []string{`kubeletConfiguration field "maxParallelImagePulls": invalid value 5: cannot be larger than 1 unless serializeImagePulls (--serialize-image-pulls) is false`}},
		{name: "parallel bound positive", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) {
			kc.SerializeImagePulls = ptr.To(false)
			kc.MaxParallelImagePulls = ptr.To[int32](0)
		}, want: []string{`kubeletConfiguration field "maxParallelImagePulls": invalid value 0: must be a positive number`}},
		{name: "hairpin-veth", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) { kc.HairpinMode = "hairpin-veth" }},
		{name: "hairpin none", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) { kc.HairpinMode = "none" }},
		{name: "hairpin unknown", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) { kc.HairpinMode = "bridge" },
			want: []string{`kubeletConfiguration field "hairpinMode": invalid value "bridge": must be "none", "hairpin-veth" or "promiscuous-bridge"`}},
		{name: "oomScoreAdj range", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) { kc.OOMScoreAdj = ptr.To[int32](-1001) },
			want: []string{`kubeletConfiguration field "oomScoreAdj": invalid value -1001: must be between -1000 and 1000, inclusive`}},
		{name: "oomScoreAdj", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) { kc.OOMScoreAdj = ptr.To[int32](500) }},
		{name: "cpuCFSQuotaPeriod 1ms", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) { kc.CPUCFSQuotaPeriod.Duration = time.Millisecond }},
		{name: "cpuCFSQuotaPeriod 1s", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) { kc.CPUCFSQuotaPeriod.Duration = time.Second }},
		{name: "cpuCFSQuotaPeriod under 1ms", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) {
			kc.CPUCFSQuotaPeriod.Duration = 999 * time.Microsecond
		},
			want: []string{`kubeletConfiguration field "cpuCFSQuotaPeriod": invalid value "999µs": must be between 1ms and 1sec, inclusive`}},
		{name: "cpuCFSQuotaPeriod over 1s", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) {
			kc.CPUCFSQuotaPeriod.Duration = time.Second + time.Nanosecond
		},
			want: []string{`kubeletConfiguration field "cpuCFSQuotaPeriod": invalid value "1.000000001s": must be between 1ms and 1sec, inclusive`}},
		{name: "defaultPodSysctls need their gate", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) {
			kc.DefaultPodSysctls = map[string]string{"net.ipv4.ip_forward": "1"}
		}, want: []string{`kubeletConfiguration field "defaultPodSysctls": the DefaultPodSysctls feature gate is required`}},
		{name: "defaultPodSysctls with their gate", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) {
			kc.DefaultPodSysctls = map[string]string{"net.ipv4.ip_forward": "1"}
			kc.FeatureGates = map[string]bool{"DefaultPodSysctls": true}
		}},
		{name: "defaultPodSysctls checked", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) {
			kc.DefaultPodSysctls = map[string]string{"vm.swappiness": "1"}
			kc.FeatureGates = map[string]bool{"DefaultPodSysctls": true}
		}, want: []string{`kubeletConfiguration field "defaultPodSysctls": "vm.swappiness" is not known to be namespaced for defaultPodSysctls`}},
		{name: "cgroupRoot slash", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) { kc.CgroupRoot = "/" }},
		{name: "cgroupRoot other", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) { kc.CgroupRoot = "/kubepods" }},
		{name: "logging json", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) {
			kc.Logging.Format = "json"
			kc.Logging.FlushFrequency.Duration.Duration *= 2
			kc.Logging.Verbosity = 4
		}},
		{name: "logging unknown format", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) { kc.Logging.Format = "xml" },
			want: []string{`kubeletConfiguration field "logging.format": Invalid value: "xml": Unsupported log format`}},
		{name: "logging vmodule", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) {
			kc.Logging.VModule = logsapi.VModuleConfiguration{{FilePattern: "kuberuntime*", Verbosity: 5}}
		}},
		{name: "alpha logging option needs its gate", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) {
			kc.Logging.Options.Text.SplitStream = true
		}, want: []string{`kubeletConfiguration field "logging.options.text.splitStream": Forbidden: Feature LoggingAlphaOptions is disabled`}},
		{name: "alpha logging option with its gate", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) {
			kc.Logging.Options.Text.SplitStream = true
			kc.FeatureGates = map[string]bool{"LoggingAlphaOptions": true}
		}},
		{name: "logging vmodule needs text", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) {
			kc.Logging.Format = "json"
			kc.Logging.VModule = logsapi.VModuleConfiguration{{FilePattern: "kuberuntime*", Verbosity: 5}}
		}, want: []string{`kubeletConfiguration field "logging.vmodule": Forbidden: Only supported for text log format`}},
		{name: "logging vmodule invalid", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) {
			kc.Logging.VModule = logsapi.VModuleConfiguration{{FilePattern: "a=b", Verbosity: 5}}
		}, want: []string{`kubeletConfiguration field "logging.vmodule[0]": Invalid value: "a=b": File pattern must not contain equal sign or comma`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kc := &kubeletconfigv1beta1.KubeletConfiguration{}
			SetDefaults(kc)
			if tc.mutate != nil {
				tc.mutate(kc)
			}
			if diff := cmp.Diff(tc.want, problemMsgs(validateSettings(kc))); diff != "" {
				t.Errorf("validateSettings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestImagePullLimit(t *testing.T) {
	for _, tc := range []struct {
		name      string
		serialize *bool
		max       *int32
		want      int
	}{
		{"default serializes", nil, nil, 1},
		{"serialized", ptr.To(true), ptr.To[int32](1), 1},
		{"parallel unbounded", ptr.To(false), nil, 0},
		{"parallel bounded", ptr.To(false), ptr.To[int32](3), 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Config{}
			c.Kubelet.SerializeImagePulls, c.Kubelet.MaxParallelImagePulls = tc.serialize, tc.max
			if got := c.ImagePullLimit(); got != tc.want {
				t.Errorf("ImagePullLimit() = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestFeatureGates(t *testing.T) {
	for _, tc := range []struct {
		name  string
		gates map[string]bool
		want  []string
	}{
		{name: "none"},
		{name: "gates at their defaults", gates: map[string]bool{
			"KubeletSeparateDiskGC": true, "AllAlpha": false, "ContextualLogging": true, "WatchListClient": true, "ComponentFlagz": true,
		}},
		{name: "honoured logging gates either way", gates: map[string]bool{"LoggingAlphaOptions": true, "ContextualLogging": false, "LoggingBetaOptions": false}},
		{name: "built-in gate on", gates: map[string]bool{"ContainerRestartRules": true}},
		{name: "built-in gate off", gates: map[string]bool{"ContainerRestartRules": false},
			want: []string{`kubeletConfiguration field "featureGates": ContainerRestartRules=false is not supported: berth always honours a container's restartPolicy and restartPolicyRules (only the default ContainerRestartRules=true is accepted)`}},
		{name: "other gate away from its default", gates: map[string]bool{"InPlacePodVerticalScalingExclusiveCPUs": true},
			want: []string{`kubeletConfiguration field "featureGates": InPlacePodVerticalScalingExclusiveCPUs=true is not supported by berth (only the v1.37.2 default InPlacePodVerticalScalingExclusiveCPUs=false is accepted)`}},
		{name: "unknown gate", gates: map[string]bool{"NoSuchGate": true},
			want: []string{`kubeletConfiguration field "featureGates": unrecognized feature gate: NoSuchGate`}},
		{name: "locked gate", gates: map[string]bool{"PodReadyToStartContainersCondition": false},
			want: []string{`kubeletConfiguration field "featureGates": cannot set feature gate PodReadyToStartContainersCondition to false, feature is locked to true`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, problemMsgs(validateFeatureGates(klog.Background(), tc.gates))); diff != "" {
				t.Errorf("validateFeatureGates (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBuiltInGatesAreOnUpstream: berth claims to always implement these
// gates, which is only accepting their default when that default is on.
func TestBuiltInGatesAreOnUpstream(t *testing.T) {
	specs := map[string]gateSpec{}
	for _, g := range upstreamKubeletGates {
		specs[g.Name] = g
	}
	for name := range builtInGates() {
		if g, ok := specs[name]; !ok || !g.Default || g.Locked {
			t.Errorf("built-in gate %s: upstream spec %+v, want a gate on by default and not locked", name, g)
		}
	}
}

// TestProblemNamesDropIn: a refused value names the drop-in that set it
// last, the value given and the value accepted; --feature-gates is named
// as the flag.
func TestProblemNamesDropIn(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "c.yaml"), "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"+
		"authentication: {webhook: {enabled: false}}\nauthorization: {mode: AlwaysAllow}\nmemoryManagerPolicy: None\n")
	writeFile(t, filepath.Join(dir, "d", "10-chains.conf"), "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmemoryManagerPolicy: BestEffort\n")
	writeFile(t, filepath.Join(dir, "d", "20-other.conf"), "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: 50\n")
	_, err := Load(context.Background(), parseFlags(t, []string{
		"--config=" + dir + "/c.yaml", "--config-dir=" + dir + "/d", "--feature-gates=AllBeta=true",
	}), testEnv("node-a"))
	if err == nil {
		t.Fatal("Load succeeded")
	}
	for _, want := range []string{
		`kubeletConfiguration field "memoryManagerPolicy" (set in drop-in "` + dir + `/d/10-chains.conf"): policy "BestEffort" is not available for platform "linux"`,
		`flag --feature-gates sets kubeletConfiguration field "featureGates": AllBeta=true is not supported by berth (only the v1.37.2 default AllBeta=false is accepted)`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not contain %q:\n%v", want, err)
		}
	}
}

func TestCloudProvider(t *testing.T) {
	for _, tc := range []struct {
		arg      string
		external bool
		wantErr  string
	}{
		{"", false, ""},
		{"external", true, ""},
		{"gce", false, `flag --cloud-provider: cloud provider "gce" was specified, but built-in cloud providers are disabled. Please set --cloud-provider=external and migrate to an external cloud provider`},
	} {
		t.Run(tc.arg, func(t *testing.T) {
			cfg, err := Load(context.Background(), parseFlags(t, []string{"--cloud-provider=" + tc.arg}), testEnv("node-a"))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Load error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.ExternalCloudProvider() != tc.external || cfg.CloudProvider != tc.arg {
				t.Errorf("CloudProvider %q, ExternalCloudProvider() = %v; want %q, %v", cfg.CloudProvider, cfg.ExternalCloudProvider(), tc.arg, tc.external)
			}
		})
	}
}
