package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The cluster node's DNS settings (startClusterEnv).
const (
	e2eClusterDNS    = "10.0.0.10"
	e2eClusterDomain = "cluster.local"
)

// dnsPod serves its /etc/resolv.conf, /etc/hosts and hostname on port.
func dnsPod(name string, port int, mutate func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken:  ptr.To(false),
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers: []corev1.Container{{
				Name: "web", Image: busybox, ImagePullPolicy: corev1.PullIfNotPresent,
				Command: []string{"sh", "-c", fmt.Sprintf(
					`mkdir -p /www && cat /etc/resolv.conf /etc/hosts > /www/index.html && echo "hostname=$(hostname)" >> /www/index.html && exec httpd -f -p %d -h /www`, port)},
			}},
		},
	}
	if mutate != nil {
		mutate(p)
	}
	return p
}

// hostNameservers are the nameserver lines of the machine's resolv.conf,
// which berth gives pods using the host's DNS.
func hostNameservers(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile("/etc/resolv.conf")
	must(t, err)
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "nameserver" {
			out = append(out, "nameserver "+f[1])
		}
	}
	return out
}

// testDNS runs one pod per DNS policy and hosts file case and checks what
// the containers see.
func (e *clusterEnv) testDNS(t *testing.T) {
	ctx := context.Background()
	hostPort := freePort(t)
	clusterSearch := "search default.svc.cluster.local svc.cluster.local cluster.local"
	cases := []struct {
		name   string
		port   int
		mutate func(*corev1.Pod)
		// want are substrings of the page; wantNot must not appear.
		want    func(pod *corev1.Pod) []string
		wantNot []string
	}{
		{
			name: "dns-cluster", port: 8080,
			want: func(pod *corev1.Pod) []string {
				return []string{
					"nameserver " + e2eClusterDNS, clusterSearch, "options ndots:5",
					"# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n",
					pod.Status.PodIP + "\tdns-cluster\n", "hostname=dns-cluster\n",
				}
			},
		},
		{
			name: "dns-default", port: 8080,
			mutate: func(p *corev1.Pod) { p.Spec.DNSPolicy = corev1.DNSDefault },
			want: func(pod *corev1.Pod) []string {
				return append(hostNameservers(t), "# Kubernetes-managed hosts file.\n")
			},
			wantNot: []string{e2eClusterDNS, "ndots:5", "cluster.local"},
		},
		{
			name: "dns-none", port: 8080,
			mutate: func(p *corev1.Pod) {
				p.Spec.DNSPolicy = corev1.DNSNone
				p.Spec.DNSConfig = &corev1.PodDNSConfig{
					Nameservers: []string{"192.0.2.53"},
					Searches:    []string{"example.test"},
					Options:     []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr.To("2")}, {Name: "edns0"}},
				}
			},
			want: func(*corev1.Pod) []string {
				return []string{"nameserver 192.0.2.53", "search example.test", "options ndots:2 edns0"}
			},
			wantNot: []string{e2eClusterDNS, "cluster.local"},
		},
		{
			name: "dns-aliases", port: 8080,
			mutate: func(p *corev1.Pod) {
				p.Spec.HostAliases = []corev1.HostAlias{{IP: "10.1.2.3", Hostnames: []string{"foo.local", "bar.local"}}}
				p.Spec.DNSConfig = &corev1.PodDNSConfig{Searches: []string{"extra.test"}}
			},
			want: func(*corev1.Pod) []string {
				return []string{
					"\n# Entries added by HostAliases.\n10.1.2.3\tfoo.local\tbar.local\n",
					clusterSearch + " extra.test",
				}
			},
		},
		{
			name: "dns-sub", port: 8080,
			mutate: func(p *corev1.Pod) {
				p.Spec.Hostname, p.Spec.Subdomain, p.Spec.SetHostnameAsFQDN = "web", "sub", ptr.To(true)
			},
			want: func(pod *corev1.Pod) []string {
				return []string{
					pod.Status.PodIP + "\tweb.sub.default.svc.cluster.local\tweb\n",
					"hostname=web.sub.default.svc.cluster.local\n",
				}
			},
		},
		{
			name: "dns-hostnet", port: hostPort,
			mutate: func(p *corev1.Pod) {
				p.Spec.HostNetwork, p.Spec.DNSPolicy = true, corev1.DNSClusterFirstWithHostNet
				p.Spec.HostAliases = []corev1.HostAlias{{IP: "10.1.2.4", Hostnames: []string{"hn.local"}}}
			},
			want: func(*corev1.Pod) []string {
				return []string{
					"nameserver " + e2eClusterDNS, clusterSearch,
					"# Kubernetes-managed hosts file (host network).\n",
					"\n# Entries added by HostAliases.\n10.1.2.4\thn.local\n",
				}
			},
		},
	}
	for _, c := range cases {
		_, err := e.admin.CoreV1().Pods("default").Create(ctx, dnsPod(c.name, c.port, c.mutate), metav1.CreateOptions{})
		must(t, err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pod := e.waitPodRunning(t, c.name)
			url := fmt.Sprintf("http://%s:%d/", pod.Status.PodIP, c.port)
			var page string
			e.node.waitFor(c.name+" serves its files", func() bool {
				b, err := httpGet(url)
				page = b
				return err == nil && strings.Contains(b, "hostname=")
			})
			t.Logf("%s serves:\n%s", c.name, page)
			for _, w := range c.want(pod) {
				if !strings.Contains(page, w) {
					t.Errorf("page lacks %q:\n%s", w, page)
				}
			}
			for _, w := range c.wantNot {
				if strings.Contains(page, w) {
					t.Errorf("page has %q:\n%s", w, page)
				}
			}
		})
	}
	for _, c := range cases {
		must(t, e.admin.CoreV1().Pods("default").Delete(ctx, c.name, metav1.DeleteOptions{}))
	}
}

// TestStaticPodDNSWithoutClusterDNS runs a ClusterFirst static pod on a
// node without clusterDNS: it falls back to the host's resolver, as
// upstream, and still gets the managed /etc/hosts.
func TestStaticPodDNSWithoutClusterDNS(t *testing.T) {
	n := newNode(t)
	n.start()
	n.writeManifest("dns.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: dns
spec:
  terminationGracePeriodSeconds: 1
  hostAliases:
  - ip: 10.1.2.3
    hostnames: [foo.local]
  containers:
  - name: web
    image: %s
    imagePullPolicy: IfNotPresent
    command: ["sh", "-c", "mkdir -p /www && cat /etc/resolv.conf /etc/hosts > /www/index.html && echo hostname=$(hostname) >> /www/index.html && exec httpd -f -p 8080 -h /www"]
`, busybox))
	pod := n.waitPod(fullName("dns"), "running", running)
	var page string
	n.waitFor("pod serves its files", func() bool {
		b, err := httpGet("http://" + pod.Status.PodIP + ":8080/")
		page = b
		return err == nil && strings.Contains(b, "hostname=")
	})
	want := append(hostNameservers(t),
		"# Kubernetes-managed hosts file.\n",
		pod.Status.PodIP+"\t"+fullName("dns")+"\n",
		"\n# Entries added by HostAliases.\n10.1.2.3\tfoo.local\n",
	)
	for _, w := range want {
		if !strings.Contains(page, w) {
			t.Errorf("page lacks %q:\n%s", w, page)
		}
	}
	if strings.Contains(page, "ndots:5") {
		t.Errorf("page has the cluster DNS options:\n%s", page)
	}
	n.removeManifest("dns.yaml")
	n.waitNoPod(fullName("dns"))
}
