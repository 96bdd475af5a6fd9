package cluster

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

var testNetwork = Network{NodeName: "node-a", NodeIP: "192.0.2.2", DNSPort: 5353}

func testNetworkLayout() Layout {
	return Layout{Dir: "/c", Ports: Ports{KubeProxyHealthz: 7, KubeProxyMetrics: 8, DNSHealth: 9, DNSReady: 10}}
}

func TestKubeProxyArgs(t *testing.T) {
	got := flagValues(t, KubeProxyArgs(testNetworkLayout(), testNetwork))
	want := map[string]string{
		"kubeconfig":                        "/c/kube-proxy.kubeconfig",
		"hostname-override":                 "node-a",
		"proxy-mode":                        "iptables",
		"cluster-cidr":                      "10.88.0.0/16",
		"healthz-bind-address":              "127.0.0.1:7",
		"metrics-bind-address":              "127.0.0.1:8",
		"conntrack-max-per-core":            "0",
		"conntrack-tcp-timeout-established": "0",
		"conntrack-tcp-timeout-close-wait":  "0",
		"iptables-localhost-nodeports":      "false",
		"profiling":                         "false",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kube-proxy flags (-want +got):\n%s", diff)
	}
}

func TestCorefile(t *testing.T) {
	got := Corefile(testNetworkLayout(), testNetwork)
	for _, line := range []string{
		".:5353 {",
		"    bind 192.0.2.2",
		"    health 127.0.0.1:9",
		"    ready 127.0.0.1:10",
		"    kubernetes cluster.local in-addr.arpa ip6.arpa {",
		"        kubeconfig /c/coredns.kubeconfig",
		"    forward . /etc/resolv.conf",
	} {
		if !strings.Contains(got, line+"\n") {
			t.Errorf("Corefile has no line %q:\n%s", line, got)
		}
	}
	// Every directive must be one tools/coredns builds in.
	built := directivesOfTheBuild(t)
	for _, m := range regexp.MustCompile(`(?m)^ {4}([a-z_]+)`).FindAllStringSubmatch(got, -1) {
		if !built[m[1]] {
			t.Errorf("Corefile uses %q, which tools/coredns does not build in", m[1])
		}
	}
}

// directivesOfTheBuild reads the directives tools/coredns's main sets.
func directivesOfTheBuild(t *testing.T) map[string]bool {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "..", "tools", "coredns", "cmd", "coredns", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	_, list, ok := bytes.Cut(src, []byte("var directives = []string{"))
	if !ok {
		t.Fatal("tools/coredns/cmd/coredns/main.go: no directives list")
	}
	list, _, _ = bytes.Cut(list, []byte("}"))
	out := map[string]bool{}
	for _, m := range regexp.MustCompile(`"([a-z_]+)"`).FindAllSubmatch(list, -1) {
		out[string(m[1])] = true
	}
	return out
}

func TestClusterDNSManifest(t *testing.T) {
	var objs []map[string]any
	for _, doc := range strings.Split(ClusterDNSManifest(testNetwork), "\n---\n") {
		var o map[string]any
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			t.Fatalf("parse manifest: %v\n%s", err, doc)
		}
		objs = append(objs, o)
	}
	kinds := make([]string, 0, len(objs))
	for _, o := range objs {
		kinds = append(kinds, o["kind"].(string))
	}
	if diff := cmp.Diff([]string{"ClusterRole", "ClusterRoleBinding", "Service", "EndpointSlice"}, kinds); diff != "" {
		t.Fatalf("kinds (-want +got):\n%s", diff)
	}
	subject := objs[1]["subjects"].([]any)[0].(map[string]any)
	if subject["name"] != ClusterDNSUser || subject["kind"] != "User" {
		t.Errorf("binding subject %v, want user %s", subject, ClusterDNSUser)
	}
	svc := objs[2]["spec"].(map[string]any)
	if svc["clusterIP"] != "10.0.0.10" || svc["selector"] != nil {
		t.Errorf("kube-dns spec %v: want clusterIP 10.0.0.10, no selector", svc)
	}
	slice := objs[3]
	want := map[string]any{
		"labels": map[string]any{
			"kubernetes.io/service-name":             "kube-dns",
			"endpointslice.kubernetes.io/managed-by": "berth-cluster",
		},
		"ports": []any{
			map[string]any{"name": "dns", "port": float64(5353), "protocol": "UDP"},
			map[string]any{"name": "dns-tcp", "port": float64(5353), "protocol": "TCP"},
		},
		"endpoints": []any{map[string]any{
			"addresses": []any{"192.0.2.2"}, "conditions": map[string]any{"ready": true}, "nodeName": "node-a",
		}},
	}
	got := map[string]any{
		"labels":    slice["metadata"].(map[string]any)["labels"],
		"ports":     slice["ports"],
		"endpoints": slice["endpoints"],
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("EndpointSlice (-want +got):\n%s", diff)
	}
}

// TestClusterDNSIPInServiceCIDR: the API server refuses a clusterIP
// outside its range.
func TestClusterDNSIPInServiceCIDR(t *testing.T) {
	if !strings.HasPrefix(ClusterDNSIP, strings.TrimSuffix(ServiceCIDR, "0/24")) {
		t.Errorf("ClusterDNSIP %s is not in ServiceCIDR %s", ClusterDNSIP, ServiceCIDR)
	}
}

// TestPodCIDRIsTheBridgeRange holds PodCIDR to the subnet of the CNI
// network hack/node-setup.sh writes.
func TestPodCIDRIsTheBridgeRange(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "hack", "node-setup.sh"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`"subnet": "([0-9./]+)"`).FindAllSubmatch(src, -1)
	if len(m) != 1 {
		t.Fatalf("hack/node-setup.sh: want one CNI subnet, found %d", len(m))
	}
	if got := string(m[0][1]); got != PodCIDR {
		t.Errorf("the CNI bridge's subnet is %s, PodCIDR %s", got, PodCIDR)
	}
}

func TestFirstIPv4(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"192.0.2.2", "192.0.2.2"},
		{"fd00::2 192.0.2.2", "192.0.2.2"},
		{"fd00::2", ""},
		{"not-an-ip 10.1.2.3 10.1.2.4", "10.1.2.3"},
	} {
		if got := firstIPv4(tc.in); got != tc.want {
			t.Errorf("firstIPv4(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
