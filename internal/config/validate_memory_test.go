package config

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

func TestValidateMemory(t *testing.T) {
	type kc = kubeletconfigv1beta1.KubeletConfiguration
	for _, tt := range []struct {
		name   string
		mutate func(*kc)
		want   []string
	}{
		{name: "defaults", mutate: func(*kc) {}},
		{name: "factor, policy, swap and qosReserved set", mutate: func(c *kc) {
			c.MemoryThrottlingFactor = ptr.To(0.8)
			c.MemoryReservationPolicy = kubeletconfigv1beta1.TieredReservationMemoryReservationPolicy
			c.MemorySwap.SwapBehavior = "LimitedSwap"
			c.QOSReserved = map[string]string{"memory": "50%"}
		}},
		{name: "factor out of range", mutate: func(c *kc) { c.MemoryThrottlingFactor = ptr.To(1.5) }, want: []string{
			`kubeletConfiguration field "memoryThrottlingFactor": memoryThrottlingFactor 1.5 must be greater than 0 and less than or equal to 1.0`,
		}},
		{name: "factor zero", mutate: func(c *kc) { c.MemoryThrottlingFactor = ptr.To(0.0) }, want: []string{
			`kubeletConfiguration field "memoryThrottlingFactor": memoryThrottlingFactor 0 must be greater than 0 and less than or equal to 1.0`,
		}},
		{name: "MemoryQoS off: the former default factor passes", mutate: func(c *kc) {
			c.FeatureGates = map[string]bool{"MemoryQoS": false}
			c.MemoryThrottlingFactor = ptr.To(0.9)
		}},
		{name: "MemoryQoS off: another factor and TieredReservation refused", mutate: func(c *kc) {
			c.FeatureGates = map[string]bool{"MemoryQoS": false}
			c.MemoryThrottlingFactor = ptr.To(0.7)
			c.MemoryReservationPolicy = kubeletconfigv1beta1.TieredReservationMemoryReservationPolicy
		}, want: []string{
			`kubeletConfiguration field "memoryThrottlingFactor": memoryThrottlingFactor must not be set when MemoryQoS feature gate is disabled`,
			`kubeletConfiguration field "memoryReservationPolicy": memoryReservationPolicy "TieredReservation" requires MemoryQoS feature gate to be enabled`,
		}},
		{name: "unknown policy", mutate: func(c *kc) { c.MemoryReservationPolicy = "Some" }, want: []string{
			`kubeletConfiguration field "memoryReservationPolicy": option "Some" specified for memoryReservationPolicy. Valid options are "None" or "TieredReservation"`,
		}},
		{name: "unknown swap behavior", mutate: func(c *kc) { c.MemorySwap.SwapBehavior = "UnlimitedSwap" }, want: []string{
			`kubeletConfiguration field "memorySwap": memorySwap.swapBehavior "UnlimitedSwap" must be one of: "", "LimitedSwap" or "NoSwap"`,
		}},
		{name: "qosReserved cpu", mutate: func(c *kc) { c.QOSReserved = map[string]string{"cpu": "10%"} }, want: []string{
			`kubeletConfiguration field "qosReserved": --qos-reserved value failed to parse: cannot reserve "cpu" resource`,
		}},
		{name: "qosReserved not a percentage", mutate: func(c *kc) { c.QOSReserved = map[string]string{"memory": "10"} }, want: []string{
			`kubeletConfiguration field "qosReserved": --qos-reserved value failed to parse: failed to parse percentage "10" for "memory" resource: percentage expected, got '10'`,
		}},
		{name: "qosReserved above 100", mutate: func(c *kc) { c.QOSReserved = map[string]string{"memory": "101%"} }, want: []string{
			`kubeletConfiguration field "qosReserved": --qos-reserved value failed to parse: failed to parse percentage "101%" for "memory" resource: percentage must be between 0 and 100`,
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := &kubeletconfigv1beta1.KubeletConfiguration{}
			SetDefaults(c)
			tt.mutate(c)
			var got []string
			for _, p := range validateMemory(c) {
				got = append(got, p.msg)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("validateMemory (-want +got):\n%s", diff)
			}
		})
	}
}

func TestQOSReservedMemory(t *testing.T) {
	for _, tt := range []struct {
		name  string
		gates map[string]bool
		qr    map[string]string
		want  *int64
	}{
		{"gate off: no effect", nil, map[string]string{"memory": "50%"}, nil},
		{"gate on", map[string]bool{"QOSReserved": true}, map[string]string{"memory": "50%"}, ptr.To[int64](50)},
		{"gate on, nothing reserved", map[string]bool{"QOSReserved": true}, nil, nil},
	} {
		c := &Config{Kubelet: kubeletconfigv1beta1.KubeletConfiguration{FeatureGates: tt.gates, QOSReserved: tt.qr}}
		if diff := cmp.Diff(tt.want, c.QOSReservedMemory()); diff != "" {
			t.Errorf("%s: QOSReservedMemory (-want +got):\n%s", tt.name, diff)
		}
	}
	if !(&Config{}).MemoryQoS() {
		t.Error("MemoryQoS() = false by default, want true (Beta, on in v1.37)")
	}
}

// TestMemoryMessagesMatchUpstream pins berth's messages to upstream's
// format strings, and the gates' defaults to the gate table.
func TestMemoryMessagesMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	formats := map[string]bool{}
	for _, fn := range []struct{ pkg, name string }{
		{"k8s.io/kubernetes/pkg/kubelet/apis/config/validation", "ValidateKubeletConfiguration"},
		{"k8s.io/kubernetes/cmd/kubelet/app", "run"},
		{"k8s.io/kubernetes/pkg/kubelet/cm", "ParseQOSReserved"},
	} {
		for _, call := range src.Func(fn.pkg, fn.name).Calls("fmt", "Errorf") {
			formats[strings.TrimPrefix(call.Arg(0).AsString(), "invalid configuration: ")] = true
		}
	}
	for _, m := range []string{msgFactorWithoutQoS, msgFactorRange, msgPolicyWithoutQoS, msgPolicyValues, msgSwapBehavior, msgQOSReserved, msgCannotReserve, msgPercentage} {
		if !formats[m] {
			t.Errorf("berth's message %q is none of upstream's", m)
		}
	}
	if up := src.Value("k8s.io/kubernetes/pkg/kubelet/apis/config/validation", "previousDefaultMemoryThrottlingFactor").AsFloat(); up != previousDefaultMemoryThrottlingFactor {
		t.Errorf("previousDefaultMemoryThrottlingFactor: berth %v, upstream %v", previousDefaultMemoryThrottlingFactor, up)
	}
	defaults := map[string]bool{gateMemoryQoS: true, gateQOSReserved: false}
	for _, g := range upstreamKubeletGates {
		if def, ok := defaults[g.Name]; ok && g.Default != def {
			t.Errorf("gate %s: berth assumes default %t, the table has %t", g.Name, def, g.Default)
		}
	}
}

// TestLoadMemorySettings: a configuration with every memory setting away
// from its default loads (none is refused as unsupported).
func TestLoadMemorySettings(t *testing.T) {
	header := "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
	fsys := fstest.MapFS{"c.yaml": {Data: []byte(header + `failSwapOn: false
memorySwap: {swapBehavior: NoSwap}
memoryThrottlingFactor: 0.8
memoryReservationPolicy: TieredReservation
qosReserved: {memory: 50%}
featureGates: {QOSReserved: true, MemoryQoS: true}
authentication: {webhook: {enabled: false}}
authorization: {mode: AlwaysAllow}
`)}}
	flags := &Flags{ConfigFile: "/c.yaml", RootDir: "/r", CertDir: "/c", PodInfraContainerImage: "p"}
	cfg, err := Load(context.Background(), flags, mapFSEnv(fsys))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.QOSReservedMemory(); got == nil || *got != 50 {
		t.Errorf("QOSReservedMemory = %v, want 50", got)
	}
	// The gate off is honoured too.
	fsys["c.yaml"].Data = []byte(header + "featureGates: {MemoryQoS: false}\nauthentication: {webhook: {enabled: false}}\nauthorization: {mode: AlwaysAllow}\n")
	if cfg, err = Load(context.Background(), flags, mapFSEnv(fsys)); err != nil || cfg.MemoryQoS() {
		t.Errorf("Load with MemoryQoS off: err %v, MemoryQoS() %v; want nil, false", err, cfg != nil && cfg.MemoryQoS())
	}
}
