package config

import (
	"context"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

func TestValidateCgroups(t *testing.T) {
	for _, tt := range []struct {
		name   string
		mutate func(*kubeletconfigv1beta1.KubeletConfiguration)
		want   []string
	}{
		{name: "defaults", mutate: func(*kubeletconfigv1beta1.KubeletConfiguration) {}},
		{name: "none alone", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) {
			kc.EnforceNodeAllocatable = []string{"none"}
			kc.CgroupsPerQOS = new(false)
		}},
		{name: "empty list without cgroupsPerQOS", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) {
			kc.EnforceNodeAllocatable = []string{}
			kc.CgroupsPerQOS = new(false)
		}},
		{name: "pods without cgroupsPerQOS", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) {
			kc.CgroupsPerQOS = new(false)
		}, want: []string{`kubeletConfiguration field "cgroupsPerQOS": must be true when "pods" is contained in enforceNodeAllocatable`}},
		{name: "reserved keys need their cgroups", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) {
			kc.EnforceNodeAllocatable = []string{"pods", "system-reserved", "kube-reserved-compressible"}
		}, want: []string{
			`kubeletConfiguration field "systemReservedCgroup": must be specified when "system-reserved" or "system-reserved-compressible" is included in enforceNodeAllocatable`,
			`kubeletConfiguration field "kubeReservedCgroup": must be specified when "kube-reserved" or "kube-reserved-compressible" is included in enforceNodeAllocatable`,
		}},
		{name: "reserved keys with their cgroups", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) {
			kc.EnforceNodeAllocatable = []string{"pods", "system-reserved-compressible", "kube-reserved"}
			kc.SystemReservedCgroup, kc.KubeReservedCgroup = "/system.slice", "/kube.slice"
		}},
		{name: "a key and its compressible variant", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) {
			kc.EnforceNodeAllocatable = []string{"kube-reserved", "kube-reserved-compressible"}
			kc.KubeReservedCgroup = "/kube.slice"
		}, want: []string{`kubeletConfiguration field "enforceNodeAllocatable": both "kube-reserved" and "kube-reserved-compressible" cannot be specified together`}},
		{name: "duplicates, none with others, unknown", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) {
			kc.EnforceNodeAllocatable = []string{"pods", "pods", "none", "memory"}
		}, want: []string{
			`kubeletConfiguration field "enforceNodeAllocatable": duplicated enforcement "pods"`,
			`kubeletConfiguration field "enforceNodeAllocatable": may not contain additional enforcements when "none" is specified`,
			`kubeletConfiguration field "enforceNodeAllocatable": invalid option "memory": valid options are "pods", "system-reserved", "system-reserved-compressible", "kube-reserved", "kube-reserved-compressible" or "none"`,
		}},
		{name: "reservedSystemCPUs", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) {
			kc.ReservedSystemCPUs = "0-1,3"
		}},
		{name: "reservedSystemCPUs unparsable and with a reserved cgroup", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) {
			kc.ReservedSystemCPUs = "0-x"
			kc.KubeReservedCgroup = "/kube.slice"
		}, want: []string{
			`kubeletConfiguration field "reservedSystemCPUs": can't use reservedSystemCPUs (--reserved-cpus) with systemReservedCgroup (--system-reserved-cgroup) or kubeReservedCgroup (--kube-reserved-cgroup)`,
			`kubeletConfiguration field "reservedSystemCPUs": unable to parse "0-x": strconv.Atoi: parsing "x": invalid syntax`,
		}},
		{name: "systemCgroups without cgroupRoot", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) {
			kc.SystemCgroups = "/system"
		}, want: []string{`kubeletConfiguration field "systemCgroups": systemCgroups (--system-cgroups) was specified and cgroupRoot (--cgroup-root) was not specified`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			kc := &kubeletconfigv1beta1.KubeletConfiguration{}
			SetDefaults(kc)
			tt.mutate(kc)
			var got []string
			for _, p := range validateCgroups(kc) {
				got = append(got, p.msg)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("validateCgroups (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEnforcementKeysMatchUpstream pins the enforceNodeAllocatable keys.
func TestEnforcementKeysMatchUpstream(t *testing.T) {
	const pkg = "k8s.io/kubernetes/pkg/kubelet/types"
	src := upstreamsrc.New(t)
	for berth, name := range map[string]string{
		enforcePods: "NodeAllocatableEnforcementKey", enforceNone: "NodeAllocatableNoneKey",
		enforceSystemReserved: "SystemReservedEnforcementKey", enforceSystemReservedCompress: "SystemReservedCompressibleEnforcementKey",
		enforceKubeReserved: "KubeReservedEnforcementKey", enforceKubeReservedCompress: "KubeReservedCompressibleEnforcementKey",
	} {
		if up := src.Value(pkg, name).AsString(); up != berth {
			t.Errorf("berth %q, upstream %s.%s %q", berth, pkg, name, up)
		}
	}
}

// TestReservedSystemCPUsOverrideReservations: after Load, the count of
// reservedSystemCPUs is systemReserved's cpu and kubeReserved has none.
func TestReservedSystemCPUsOverrideReservations(t *testing.T) {
	header := "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
	fsys := fstest.MapFS{"c.yaml": {Data: []byte(header + `reservedSystemCPUs: "0-1,3"
systemReserved: {cpu: 500m, memory: 1Gi}
kubeReserved: {cpu: 200m, memory: 512Mi}
authentication: {webhook: {enabled: false}}
authorization: {mode: AlwaysAllow}
`)}}
	flags := &Flags{ConfigFile: "/c.yaml", RootDir: "/r", CertDir: "/c", PodInfraContainerImage: "p"}
	cfg, err := Load(context.Background(), flags, mapFSEnv(fsys))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"cpu": "3", "memory": "1Gi"}, cfg.Kubelet.SystemReserved); diff != "" {
		t.Errorf("systemReserved (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"memory": "512Mi"}, cfg.Kubelet.KubeReserved); diff != "" {
		t.Errorf("kubeReserved (-want +got):\n%s", diff)
	}
}
