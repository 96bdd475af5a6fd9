package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/berthk8s/berth/internal/node/topology"
)

func TestValidateTopologyManager(t *testing.T) {
	for _, tt := range []struct {
		name     string
		mutate   func(*kubeletconfigv1beta1.KubeletConfiguration)
		wantOpts *topology.Options
		want     []string
	}{
		{name: "default none", mutate: func(*kubeletconfigv1beta1.KubeletConfiguration) {}},
		{name: "none ignores its options, as upstream", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) {
			kc.TopologyManagerPolicyOptions = map[string]string{"spread": "x"}
		}},
		{name: "unknown policy", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) { kc.TopologyManagerPolicy = "strict" },
			want: []string{`kubeletConfiguration field "topologyManagerPolicy": invalid configuration: topologyManagerPolicy (--topology-manager-policy) "strict" must be one of: ["none" "best-effort" "restricted" "single-numa-node"]`}},
		{name: "unknown scope", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) { kc.TopologyManagerScope = "node" },
			want: []string{`kubeletConfiguration field "topologyManagerScope": invalid configuration: topologyManagerScope (--topology-manager-scope) "node" must be one of: "container", or "pod"`}},
		{name: "single-numa-node, pod scope", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) {
			kc.TopologyManagerPolicy, kc.TopologyManagerScope = "single-numa-node", "pod"
		}, wantOpts: &topology.Options{MaxAllowableNUMANodes: 8}},
		{name: "restricted with both options", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) {
			kc.TopologyManagerPolicy = "restricted"
			kc.TopologyManagerPolicyOptions = map[string]string{"prefer-closest-numa-nodes": "true", "max-allowable-numa-nodes": "12"}
		}, wantOpts: &topology.Options{PreferClosestNUMA: true, MaxAllowableNUMANodes: 12}},
		{name: "best-effort with a bad option", mutate: func(kc *kubeletconfigv1beta1.KubeletConfiguration) {
			kc.TopologyManagerPolicy = "best-effort"
			kc.TopologyManagerPolicyOptions = map[string]string{"max-allowable-numa-nodes": "2"}
		}, wantOpts: &topology.Options{MaxAllowableNUMANodes: 8},
			want: []string{`kubeletConfiguration field "topologyManagerPolicyOptions": the minimum value of "max-allowable-numa-nodes" should not be less than 8`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			kc := &kubeletconfigv1beta1.KubeletConfiguration{}
			SetDefaults(kc)
			tt.mutate(kc)
			opts, ps := validateTopologyManager(kc)
			var got []string
			for _, p := range ps {
				got = append(got, p.msg)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("problems (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.wantOpts, opts); d != "" {
				t.Errorf("options (-want +got):\n%s", d)
			}
		})
	}
}
