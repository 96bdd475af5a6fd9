package containerconfig

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/protobuf/testing/protocmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestParseResolvConf(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want HostDNS
	}{
		{name: "empty", in: "", want: HostDNS{}},
		{
			name: "typical",
			in:   "# generated\nnameserver 10.0.0.2\nnameserver 1.1.1.1\nsearch corp.example. example.com\noptions ndots:2 edns0\n",
			want: HostDNS{Servers: []string{"10.0.0.2", "1.1.1.1"}, Searches: []string{"corp.example", "example.com"}, Options: []string{"ndots:2", "edns0"}},
		},
		{
			name: "last search wins, root dropped, comments skipped",
			in:   "search a b\n; comment\nsearch c .\nnameserver\n",
			want: HostDNS{Searches: []string{"c"}},
		},
		{
			name: "later option replaces earlier",
			in:   "options ndots:2 timeout:1\noptions ndots:5\n",
			want: HostDNS{Options: []string{"ndots:5", "timeout:1"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseResolvConf(strings.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("ParseResolvConf (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPodDNSConfig(t *testing.T) {
	host := HostDNS{Servers: []string{"10.0.0.2"}, Searches: []string{"example.com"}, Options: []string{"ndots:2"}}
	cluster := DNS{Host: host, ClusterDNS: []string{"10.96.0.10"}, ClusterDomain: "cluster.local"}
	standalone := DNS{Host: host}
	hostCfg := &runtimeapi.DNSConfig{Servers: []string{"10.0.0.2"}, Searches: []string{"example.com"}, Options: []string{"ndots:2"}}
	clusterCfg := &runtimeapi.DNSConfig{
		Servers:  []string{"10.96.0.10"},
		Searches: []string{"ns.svc.cluster.local", "svc.cluster.local", "cluster.local", "example.com"},
		Options:  []string{"ndots:5"},
	}
	missing := []Event{{Reason: "MissingClusterDNS", Message: `pod: "web_ns(uid-1)". kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.`}}
	five, empty := "5", ""
	podCfg := &corev1.PodDNSConfig{
		Nameservers: []string{"8.8.8.8", "10.0.0.2"},
		Searches:    []string{"svc.local"},
		Options:     []corev1.PodDNSConfigOption{{Name: "ndots", Value: &five}, {Name: "rotate"}, {Name: "edns0", Value: &empty}},
	}
	tests := []struct {
		name        string
		policy      corev1.DNSPolicy
		hostNetwork bool
		cfg         *corev1.PodDNSConfig
		settings    DNS
		want        *runtimeapi.DNSConfig
		wantEvents  []Event
	}{
		{name: "ClusterFirst uses the cluster DNS", policy: corev1.DNSClusterFirst, settings: cluster, want: clusterCfg},
		{
			name: "ClusterFirst without clusterDomain keeps the host search path", policy: corev1.DNSClusterFirst,
			settings: DNS{Host: host, ClusterDNS: []string{"10.96.0.10", "10.96.0.11"}},
			want:     &runtimeapi.DNSConfig{Servers: []string{"10.96.0.10", "10.96.0.11"}, Searches: []string{"example.com"}, Options: []string{"ndots:5"}},
		},
		{
			name: "ClusterFirst drops a host search domain repeating a cluster one", policy: corev1.DNSClusterFirst,
			settings: DNS{Host: HostDNS{Searches: []string{"cluster.local", "corp"}}, ClusterDNS: []string{"10.96.0.10"}, ClusterDomain: "cluster.local"},
			want: &runtimeapi.DNSConfig{
				Servers: []string{"10.96.0.10"}, Options: []string{"ndots:5"},
				Searches: []string{"ns.svc.cluster.local", "svc.cluster.local", "cluster.local", "corp"},
			},
		},
		{
			name: "ClusterFirst without clusterDNS falls back to host with a warning", policy: corev1.DNSClusterFirst,
			settings: standalone, want: hostCfg, wantEvents: missing,
		},
		{name: "ClusterFirst on host network uses host", policy: corev1.DNSClusterFirst, hostNetwork: true, settings: cluster, want: hostCfg},
		{name: "ClusterFirstWithHostNet on host network uses the cluster DNS", policy: corev1.DNSClusterFirstWithHostNet, hostNetwork: true, settings: cluster, want: clusterCfg},
		{name: "ClusterFirstWithHostNet uses the cluster DNS", policy: corev1.DNSClusterFirstWithHostNet, settings: cluster, want: clusterCfg},
		{
			name: "ClusterFirstWithHostNet without clusterDNS falls back with a warning", policy: corev1.DNSClusterFirstWithHostNet, hostNetwork: true,
			settings: standalone, want: hostCfg, wantEvents: missing,
		},
		{name: "unknown policy reads as ClusterFirst", policy: "Bogus", settings: cluster, want: clusterCfg},
		{name: "Default uses host", policy: corev1.DNSDefault, settings: cluster, want: hostCfg},
		{
			name: "no resolv.conf disables lookups", policy: corev1.DNSDefault, settings: DNS{Host: HostDNS{NoResolvConf: true}},
			want: &runtimeapi.DNSConfig{Servers: []string{"127.0.0.1"}, Searches: []string{"."}},
		},
		{
			name: "no resolv.conf does not affect ClusterFirst", policy: corev1.DNSClusterFirst,
			settings: DNS{Host: HostDNS{NoResolvConf: true}, ClusterDNS: []string{"10.96.0.10"}, ClusterDomain: "cluster.local"},
			want: &runtimeapi.DNSConfig{
				Servers: []string{"10.96.0.10"}, Options: []string{"ndots:5"},
				Searches: []string{"ns.svc.cluster.local", "svc.cluster.local", "cluster.local"},
			},
		},
		{name: "None without dnsConfig is empty", policy: corev1.DNSNone, settings: cluster, want: &runtimeapi.DNSConfig{}},
		{
			name: "None uses only the pod's config", policy: corev1.DNSNone, cfg: podCfg, settings: cluster,
			want: &runtimeapi.DNSConfig{Servers: []string{"8.8.8.8", "10.0.0.2"}, Searches: []string{"svc.local"}, Options: []string{"ndots:5", "rotate", "edns0"}},
		},
		{
			name: "Default merges the pod's config", policy: corev1.DNSDefault, cfg: podCfg, settings: cluster,
			want: &runtimeapi.DNSConfig{Servers: []string{"10.0.0.2", "8.8.8.8"}, Searches: []string{"example.com", "svc.local"}, Options: []string{"ndots:5", "rotate", "edns0"}},
		},
		{
			name: "ClusterFirst merges the pod's config", policy: corev1.DNSClusterFirst, settings: cluster,
			cfg: &corev1.PodDNSConfig{
				Nameservers: []string{"10.96.0.10", "1.1.1.1"}, Searches: []string{"svc.cluster.local", "extra"},
				Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: new("2")}, {Name: "timeout", Value: new("1")}},
			},
			want: &runtimeapi.DNSConfig{
				Servers:  []string{"10.96.0.10", "1.1.1.1"},
				Searches: []string{"ns.svc.cluster.local", "svc.cluster.local", "cluster.local", "example.com", "extra"},
				Options:  []string{"ndots:2", "timeout:1"},
			},
		},
		{
			name: "limits: 3 nameservers, 32 search domains", policy: corev1.DNSNone,
			cfg: &corev1.PodDNSConfig{
				Nameservers: []string{"1.1.1.1", "2.2.2.2", "3.3.3.3", "4.4.4.4"},
				Searches:    manyDomains(40, "d"),
			},
			want: &runtimeapi.DNSConfig{Servers: []string{"1.1.1.1", "2.2.2.2", "3.3.3.3"}, Searches: manyDomains(32, "d")},
			wantEvents: []Event{
				{Reason: "DNSConfigForming", Message: "Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: 1.1.1.1 2.2.2.2 3.3.3.3"},
				{Reason: "DNSConfigForming", Message: "Search Line limits were exceeded, some search paths have been omitted, the applied search line is: " + strings.Join(manyDomains(32, "d"), " ")},
			},
		},
		{
			name: "limits: cluster search path plus host domains", policy: corev1.DNSClusterFirst,
			settings: DNS{Host: HostDNS{Searches: manyDomains(31, "h")}, ClusterDNS: []string{"10.96.0.10"}, ClusterDomain: "c"},
			want: &runtimeapi.DNSConfig{
				Servers: []string{"10.96.0.10"}, Options: []string{"ndots:5"},
				Searches: append([]string{"ns.svc.c", "svc.c", "c"}, manyDomains(29, "h")...),
			},
			wantEvents: []Event{{Reason: "DNSConfigForming", Message: "Search Line limits were exceeded, some search paths have been omitted, the applied search line is: " +
				strings.Join(append([]string{"ns.svc.c", "svc.c", "c"}, manyDomains(29, "h")...), " ")}},
		},
		{
			name: "limits: 2048 characters of search domains", policy: corev1.DNSNone,
			cfg: &corev1.PodDNSConfig{Searches: manyDomains(20, strings.Repeat("x", 200))},
			// 202 characters per domain plus a separator: 10 fit.
			want: &runtimeapi.DNSConfig{Searches: manyDomains(10, strings.Repeat("x", 200))},
			wantEvents: []Event{{Reason: "DNSConfigForming", Message: "Search Line limits were exceeded, some search paths have been omitted, the applied search line is: " +
				strings.Join(manyDomains(10, strings.Repeat("x", 200)), " ")}},
		},
		{
			name: "limits: a search domain over 253 characters is dropped", policy: corev1.DNSNone,
			cfg:        &corev1.PodDNSConfig{Searches: []string{"a", strings.Repeat("y", 254), "b"}},
			want:       &runtimeapi.DNSConfig{Searches: []string{"a", "b"}},
			wantEvents: []Event{{Reason: "DNSConfigForming", Message: "Search Line limits were exceeded, some search paths have been omitted, the applied search line is: a b"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "uid-1"},
				Spec:       corev1.PodSpec{DNSPolicy: tt.policy, DNSConfig: tt.cfg, HostNetwork: tt.hostNetwork},
			}
			got, events := podDNSConfig(pod, tt.settings)
			if diff := cmp.Diff(tt.want, got, protocmp.Transform()); diff != "" {
				t.Errorf("podDNSConfig (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantEvents, events, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("podDNSConfig events (-want +got):\n%s", diff)
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
