package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/berthk8s/berth/internal/node/cpumanager"
)

func TestValidateCPUManager(t *testing.T) {
	static := func(kc *kubeletconfigv1beta1.KubeletConfiguration) {
		kc.CPUManagerPolicy = "static"
		kc.ReservedSystemCPUs = "0"
	}
	for _, tt := range []struct {
		name     string
		mutate   func(*kubeletconfigv1beta1.KubeletConfiguration)
		wantOpts *cpumanager.Options
		want     []string
	}{
		{name: "default none", mutate: func(*kubeletconfigv1beta1.KubeletConfiguration) {}},
		{name: "none with options", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) {
			kc.CPUManagerPolicyOptions = map[string]string{"full-pcpus-only": "true"}
		}, want: []string{`kubeletConfiguration field "cpuManagerPolicyOptions": None policy: received unsupported options=map[full-pcpus-only:true]`}},
		{name: "unknown policy", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) { kc.CPUManagerPolicy = "dynamic" },
			want: []string{`kubeletConfiguration field "cpuManagerPolicy": unknown policy: "dynamic" (must be "none" or "static")`}},
		{name: "static with reservedSystemCPUs", mutate: static, wantOpts: &cpumanager.Options{}},
		{name: "static with systemReserved cpu", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) {
			kc.CPUManagerPolicy = "static"
			kc.SystemReserved = map[string]string{"cpu": "500m"}
		}, wantOpts: &cpumanager.Options{}},
		{name: "static without reserved CPUs", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) { kc.CPUManagerPolicy = "static" },
			wantOpts: &cpumanager.Options{},
			want:     []string{`kubeletConfiguration field "cpuManagerPolicy": [cpumanager] the static policy requires systemreserved.cpu + kubereserved.cpu to be greater than zero`}},
		{name: "static, alpha option with its gate", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) {
			static(kc)
			kc.CPUManagerPolicyOptions = map[string]string{"distribute-cpus-across-cores": "true"}
			kc.FeatureGates = map[string]bool{"CPUManagerPolicyAlphaOptions": true}
		}, wantOpts: &cpumanager.Options{DistributeCPUsAcrossCores: true}},
		{name: "static, beta option with its gate off", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) {
			static(kc)
			kc.CPUManagerPolicyOptions = map[string]string{"distribute-cpus-across-numa": "true"}
			kc.FeatureGates = map[string]bool{"CPUManagerPolicyBetaOptions": false}
		}, wantOpts: &cpumanager.Options{},
			want: []string{`kubeletConfiguration field "cpuManagerPolicyOptions": CPU Manager Policy Beta-level Options not enabled, but option "distribute-cpus-across-numa" provided`}},
		{name: "static, zero reconcile period", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) {
			static(kc)
			kc.CPUManagerReconcilePeriod.Duration = 0
		}, wantOpts: &cpumanager.Options{},
			want: []string{`kubeletConfiguration field "cpuManagerReconcilePeriod": must be greater than 0 with the static policy`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			kc := &kubeletconfigv1beta1.KubeletConfiguration{}
			SetDefaults(kc)
			tt.mutate(kc)
			opts, ps := validateCPUManager(kc)
			var got []string
			for _, p := range ps {
				got = append(got, p.msg)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("validateCPUManager problems (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantOpts, opts); diff != "" {
				t.Errorf("validateCPUManager options (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNumReservedCPUs(t *testing.T) {
	for _, tt := range []struct {
		name  string
		kc    kubeletconfigv1beta1.KubeletConfiguration
		wantN int
	}{
		{name: "none"},
		{name: "rounded up", kc: kubeletconfigv1beta1.KubeletConfiguration{SystemReserved: map[string]string{"cpu": "500m"}, KubeReserved: map[string]string{"cpu": "1"}}, wantN: 2},
		{name: "reservedSystemCPUs", kc: kubeletconfigv1beta1.KubeletConfiguration{ReservedSystemCPUs: "0,2-3", SystemReserved: map[string]string{"cpu": "8"}}, wantN: 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := &Config{Kubelet: tt.kc}
			if got := c.NumReservedCPUs(); got != tt.wantN {
				t.Errorf("NumReservedCPUs = %d, want %d", got, tt.wantN)
			}
		})
	}
}
