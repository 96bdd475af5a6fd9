package kuberuntime

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/protobuf/testing/protocmp"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestParseResolvConf(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want hostDNS
	}{
		{name: "empty", in: "", want: hostDNS{}},
		{
			name: "typical",
			in:   "# generated\nnameserver 10.0.0.2\nnameserver 1.1.1.1\nsearch corp.example. example.com\noptions ndots:2 edns0\n",
			want: hostDNS{Servers: []string{"10.0.0.2", "1.1.1.1"}, Searches: []string{"corp.example", "example.com"}, Options: []string{"ndots:2", "edns0"}},
		},
		{
			name: "last search wins, root dropped, comments skipped",
			in:   "search a b\n; comment\nsearch c .\nnameserver\n",
			want: hostDNS{Searches: []string{"c"}},
		},
		{
			name: "later option replaces earlier",
			in:   "options ndots:2 timeout:1\noptions ndots:5\n",
			want: hostDNS{Options: []string{"ndots:5", "timeout:1"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseResolvConf(strings.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("parseResolvConf (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPodDNSConfig(t *testing.T) {
	host := hostDNS{Servers: []string{"10.0.0.2"}, Searches: []string{"example.com"}, Options: []string{"ndots:2"}}
	five := "5"
	podCfg := &corev1.PodDNSConfig{
		Nameservers: []string{"8.8.8.8", "10.0.0.2"},
		Searches:    []string{"svc.local"},
		Options:     []corev1.PodDNSConfigOption{{Name: "ndots", Value: &five}, {Name: "rotate"}},
	}
	tests := []struct {
		name   string
		policy corev1.DNSPolicy
		cfg    *corev1.PodDNSConfig
		host   hostDNS
		want   *runtimeapi.DNSConfig
	}{
		{
			name: "ClusterFirst falls back to host", policy: corev1.DNSClusterFirst, host: host,
			want: &runtimeapi.DNSConfig{Servers: []string{"10.0.0.2"}, Searches: []string{"example.com"}, Options: []string{"ndots:2"}},
		},
		{
			name: "Default uses host", policy: corev1.DNSDefault, host: host,
			want: &runtimeapi.DNSConfig{Servers: []string{"10.0.0.2"}, Searches: []string{"example.com"}, Options: []string{"ndots:2"}},
		},
		{
			name: "no resolv.conf disables lookups", policy: corev1.DNSDefault, host: hostDNS{NoResolvConf: true},
			want: &runtimeapi.DNSConfig{Servers: []string{"127.0.0.1"}, Searches: []string{"."}},
		},
		{
			name: "None uses only the pod's config", policy: corev1.DNSNone, cfg: podCfg, host: host,
			want: &runtimeapi.DNSConfig{Servers: []string{"8.8.8.8", "10.0.0.2"}, Searches: []string{"svc.local"}, Options: []string{"ndots:5", "rotate"}},
		},
		{
			name: "Default merges the pod's config", policy: corev1.DNSDefault, cfg: podCfg, host: host,
			want: &runtimeapi.DNSConfig{Servers: []string{"10.0.0.2", "8.8.8.8"}, Searches: []string{"example.com", "svc.local"}, Options: []string{"ndots:5", "rotate"}},
		},
		{
			name: "limits: 3 nameservers, 32 search domains", policy: corev1.DNSNone,
			cfg: &corev1.PodDNSConfig{
				Nameservers: []string{"1.1.1.1", "2.2.2.2", "3.3.3.3", "4.4.4.4"},
				Searches:    manyDomains(40, "d"),
			},
			want: &runtimeapi.DNSConfig{Servers: []string{"1.1.1.1", "2.2.2.2", "3.3.3.3"}, Searches: manyDomains(32, "d")},
		},
		{
			name: "limits: 2048 characters of search domains", policy: corev1.DNSNone,
			cfg: &corev1.PodDNSConfig{Searches: manyDomains(20, strings.Repeat("x", 200))},
			// 202 characters per domain plus a separator: 10 fit.
			want: &runtimeapi.DNSConfig{Searches: manyDomains(10, strings.Repeat("x", 200))},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: corev1.PodSpec{DNSPolicy: tt.policy, DNSConfig: tt.cfg}}
			got := podDNSConfig(pod, tt.host)
			if diff := cmp.Diff(tt.want, got, protocmp.Transform()); diff != "" {
				t.Errorf("podDNSConfig (-want +got):\n%s", diff)
			}
		})
	}
}

func manyDomains(n int, prefix string) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("%s%02d", prefix, i))
	}
	return out
}
