package containerconfig

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"
)

func basePod() *corev1.Pod {
	grace := int64(30)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web", Namespace: "default", UID: "uid-1",
			Labels:      map[string]string{"app": "web"},
			Annotations: map[string]string{"note": "x"},
		},
		Spec: corev1.PodSpec{
			DNSPolicy:                     corev1.DNSClusterFirst,
			RestartPolicy:                 corev1.RestartPolicyAlways,
			TerminationGracePeriodSeconds: &grace,
			Containers: []corev1.Container{{
				Name: "app", Image: "busybox:1.36", ImagePullPolicy: corev1.PullIfNotPresent,
				TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile,
			}},
		},
	}
}

// nodeUserns is what every pod in the host's user namespace gets: mode
// NODE, said explicitly, as upstream.
var nodeUserns = &runtimeapi.UserNamespace{Mode: runtimeapi.NamespaceMode_NODE}

// podUserns is the CRI form of the user namespace the tests give pods
// with hostUsers: false.
func podUserns() *runtimeapi.UserNamespace {
	return &runtimeapi.UserNamespace{
		Mode: runtimeapi.NamespaceMode_POD,
		Uids: []*runtimeapi.IDMapping{{HostId: 131072, ContainerId: 0, Length: 65536}},
		Gids: []*runtimeapi.IDMapping{{HostId: 131072, ContainerId: 0, Length: 65536}},
	}
}

func baseSandboxConfig() *runtimeapi.PodSandboxConfig {
	return &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: "web", Namespace: "default", Uid: "uid-1", Attempt: 0},
		Hostname:     "web",
		LogDirectory: "/var/log/pods/default_web_uid-1",
		DnsConfig:    &runtimeapi.DNSConfig{Servers: []string{"10.0.0.2"}, Searches: []string{"example.com"}},
		Labels: map[string]string{
			"app": "web", "io.kubernetes.pod.name": "web", "io.kubernetes.pod.namespace": "default", "io.kubernetes.pod.uid": "uid-1",
		},
		Annotations: map[string]string{"note": "x"},
		Linux: &runtimeapi.LinuxPodSandboxConfig{
			SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
				NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_POD, Pid: runtimeapi.NamespaceMode_CONTAINER, Ipc: runtimeapi.NamespaceMode_POD, UsernsOptions: nodeUserns},
				Seccomp:          &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault},
			},
			Overhead:  &runtimeapi.LinuxContainerResources{},
			Resources: &runtimeapi.LinuxContainerResources{CpuShares: 2, CpuPeriod: 100000},
		},
	}
}

func TestBuildSandboxConfig(t *testing.T) {
	host := HostDNS{Servers: []string{"10.0.0.2"}, Searches: []string{"example.com"}}
	tru := true
	uid := int64(1000)
	tests := []struct {
		name    string
		attempt uint32
		userns  *UserNamespace
		mutate  func(*corev1.Pod)
		want    func(*runtimeapi.PodSandboxConfig)
		wantErr string
	}{
		{name: "base"},
		{name: "attempt", attempt: 3, want: func(c *runtimeapi.PodSandboxConfig) { c.Metadata.Attempt = 3 }},
		{
			name:   "own user namespace",
			userns: &UserNamespace{HostID: 131072, Length: 65536},
			mutate: func(p *corev1.Pod) { p.Spec.HostUsers = new(false) },
			want: func(c *runtimeapi.PodSandboxConfig) {
				c.Linux.SecurityContext.NamespaceOptions.UsernsOptions = podUserns()
			},
		},
		{
			name:   "spec hostname",
			mutate: func(p *corev1.Pod) { p.Spec.Hostname = "custom" },
			want:   func(c *runtimeapi.PodSandboxConfig) { c.Hostname = "custom" },
		},
		{
			name: "host network: node namespace, no hostname",
			mutate: func(p *corev1.Pod) {
				p.Spec.HostNetwork, p.Spec.HostPID, p.Spec.HostIPC = true, true, true
			},
			want: func(c *runtimeapi.PodSandboxConfig) {
				c.Hostname = ""
				c.Linux.SecurityContext.NamespaceOptions = &runtimeapi.NamespaceOption{
					Network: runtimeapi.NamespaceMode_NODE, Pid: runtimeapi.NamespaceMode_NODE, Ipc: runtimeapi.NamespaceMode_NODE, UsernsOptions: nodeUserns,
				}
			},
		},
		{
			name:   "shared process namespace",
			mutate: func(p *corev1.Pod) { p.Spec.ShareProcessNamespace = &tru },
			want: func(c *runtimeapi.PodSandboxConfig) {
				c.Linux.SecurityContext.NamespaceOptions.Pid = runtimeapi.NamespaceMode_POD
			},
		},
		{
			name: "host ports become port mappings",
			mutate: func(p *corev1.Pod) {
				p.Spec.Containers[0].Ports = []corev1.ContainerPort{
					{ContainerPort: 80, HostPort: 8080, Protocol: corev1.ProtocolTCP, HostIP: "127.0.0.1"},
					{ContainerPort: 53, HostPort: 5353, Protocol: corev1.ProtocolUDP},
					{ContainerPort: 9090, Protocol: corev1.ProtocolTCP},
				}
			},
			want: func(c *runtimeapi.PodSandboxConfig) {
				c.PortMappings = []*runtimeapi.PortMapping{
					{Protocol: runtimeapi.Protocol_TCP, ContainerPort: 80, HostPort: 8080, HostIp: "127.0.0.1"},
					{Protocol: runtimeapi.Protocol_UDP, ContainerPort: 53, HostPort: 5353},
				}
			},
		},
		{
			name:   "dnsPolicy Default",
			mutate: func(p *corev1.Pod) { p.Spec.DNSPolicy = corev1.DNSDefault },
		},
		{
			name:   "subdomain does not change the hostname",
			mutate: func(p *corev1.Pod) { p.Spec.Subdomain = "sub" },
		},
		{
			name: "setHostnameAsFQDN",
			mutate: func(p *corev1.Pod) {
				p.Spec.Hostname, p.Spec.Subdomain, p.Spec.SetHostnameAsFQDN = "h", "sub", &tru
			},
			want: func(c *runtimeapi.PodSandboxConfig) { c.Hostname = "h.sub.default.svc." },
		},
		{
			name:   "setHostnameAsFQDN without subdomain keeps the hostname",
			mutate: func(p *corev1.Pod) { p.Spec.SetHostnameAsFQDN = &tru },
		},
		{
			name: "FQDN over 64 characters",
			mutate: func(p *corev1.Pod) {
				p.Spec.Hostname, p.Spec.Subdomain, p.Spec.SetHostnameAsFQDN = strings.Repeat("h", 50), "sub", &tru
			},
			wantErr: "is too long (64 characters is the max, 67 characters requested)",
		},
		{
			name:    "invalid spec hostname",
			mutate:  func(p *corev1.Pod) { p.Spec.Hostname = "Not_A_Label" },
			wantErr: `pod Hostname "Not_A_Label" is not a valid DNS label`,
		},
		{
			name:    "invalid subdomain",
			mutate:  func(p *corev1.Pod) { p.Spec.Subdomain = "a.b" },
			wantErr: `pod Subdomain "a.b" is not a valid DNS label`,
		},
		{
			name: "pod security context, sysctls and a privileged container",
			mutate: func(p *corev1.Pod) {
				p.Spec.SecurityContext = &corev1.PodSecurityContext{
					RunAsUser: &uid, FSGroup: &uid, SupplementalGroups: []int64{5},
					Sysctls: []corev1.Sysctl{{Name: "net.ipv4.ip_unprivileged_port_start", Value: "0"}},
				}
				p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: &tru}
			},
			want: func(c *runtimeapi.PodSandboxConfig) {
				sc := c.Linux.SecurityContext
				sc.RunAsUser = &runtimeapi.Int64Value{Value: 1000}
				sc.SupplementalGroups = []int64{1000, 5}
				sc.Privileged = true
				c.Linux.Sysctls = map[string]string{"net.ipv4.ip_unprivileged_port_start": "0"}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := basePod()
			if tt.mutate != nil {
				tt.mutate(pod)
			}
			got, events, err := Sandbox(SandboxParams{Pod: pod, Attempt: tt.attempt, PodLogsDir: "/var/log/pods", DNS: DNS{Host: host},
				UserNamespace: tt.userns})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// Without clusterDNS, ClusterFirst pods fall back with a warning.
			wantMissing := pod.Spec.DNSPolicy == corev1.DNSClusterFirst && !pod.Spec.HostNetwork
			if gotMissing := len(events) == 1 && events[0].Reason == eventMissingClusterDNS; gotMissing != wantMissing || len(events) > 1 {
				t.Errorf("events = %v, want MissingClusterDNS: %v", events, wantMissing)
			}
			want := baseSandboxConfig()
			if tt.want != nil {
				tt.want(want)
			}
			if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
				t.Errorf("buildSandboxConfig (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPodHostnameAndDomain(t *testing.T) {
	tests := []struct {
		name, podName, hostname, subdomain, clusterDomain string
		override                                          *string
		wantHost, wantDomain, wantErr                     string
	}{
		{name: "pod name", podName: "web", wantHost: "web"},
		{name: "spec hostname wins", podName: "web", hostname: "h", wantHost: "h"},
		{
			name: "long pod name is cut to 63 without trailing dash or dot", podName: strings.Repeat("a", 61) + "-.b",
			wantHost: strings.Repeat("a", 61),
		},
		{name: "pod name of dashes is invalid", podName: strings.Repeat("-", 70), wantErr: "was invalid"},
		{name: "63-character spec hostname", podName: "web", hostname: strings.Repeat("a", 63), wantHost: strings.Repeat("a", 63)},
		{name: "64-character spec hostname is invalid", podName: "web", hostname: strings.Repeat("a", 64), wantErr: "is not a valid DNS label"},
		{
			name: "subdomain", podName: "web", subdomain: "sub", clusterDomain: "cluster.local",
			wantHost: "web", wantDomain: "sub.ns.svc.cluster.local",
		},
		{name: "subdomain without cluster domain", podName: "web", subdomain: "sub", wantHost: "web", wantDomain: "sub.ns.svc."},
		{
			name: "hostnameOverride wins over hostname and subdomain, and has no domain", podName: "web", hostname: "h", subdomain: "sub",
			clusterDomain: "cluster.local", override: ptr.To("override.example.host"), wantHost: "override.example.host",
		},
		{name: "hostnameOverride must be a DNS subdomain", podName: "web", override: ptr.To("Not_Valid"), wantErr: "is not a valid DNS subdomain"},
		{
			name: "long hostnameOverride is cut to 63", podName: "web", override: ptr.To(strings.Repeat("a", 62) + ".b" + strings.Repeat("c", 10)),
			wantHost: strings.Repeat("a", 62),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: tt.podName, Namespace: "ns"},
				Spec:       corev1.PodSpec{Hostname: tt.hostname, Subdomain: tt.subdomain, HostnameOverride: tt.override},
			}
			host, domain, err := HostnameAndDomain(pod, tt.clusterDomain)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if host != tt.wantHost || domain != tt.wantDomain {
				t.Errorf("HostnameAndDomain = %q, %q; want %q, %q", host, domain, tt.wantHost, tt.wantDomain)
			}
		})
	}
}

func TestKernelHostname(t *testing.T) {
	tru, fls := true, false
	tests := []struct {
		name, hostname, domain string
		fqdn                   *bool
		want, wantErr          string
	}{
		{name: "no FQDN asked", hostname: "h", domain: "sub.ns.svc.cluster.local", want: "h"},
		{name: "FQDN false", hostname: "h", domain: "sub.ns.svc.cluster.local", fqdn: &fls, want: "h"},
		{name: "FQDN without domain", hostname: "h", fqdn: &tru, want: "h"},
		{name: "FQDN", hostname: "h", domain: "sub.ns.svc.cluster.local", fqdn: &tru, want: "h.sub.ns.svc.cluster.local"},
		{name: "FQDN of 64 characters fits", hostname: strings.Repeat("h", 39), domain: "sub.ns.svc.cluster.local", fqdn: &tru,
			want: strings.Repeat("h", 39) + ".sub.ns.svc.cluster.local"},
		{name: "FQDN of 65 characters", hostname: strings.Repeat("h", 40), domain: "sub.ns.svc.cluster.local", fqdn: &tru,
			wantErr: "failed to construct FQDN from pod hostname and cluster domain, FQDN " + strings.Repeat("h", 40) +
				".sub.ns.svc.cluster.local is too long (64 characters is the max, 65 characters requested)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := kernelHostname(tt.hostname, tt.domain, tt.fqdn)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("kernelHostname = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// TestSandboxCgroupParent: the pod's cgroup reaches the runtime as the
// sandbox's cgroup_parent; "" leaves the runtime's default.
func TestSandboxCgroupParent(t *testing.T) {
	for _, parent := range []string{"", "/kubepods/burstable/poduid-1"} {
		got, _, err := Sandbox(SandboxParams{Pod: basePod(), PodLogsDir: "/var/log/pods", CgroupParent: parent})
		if err != nil {
			t.Fatal(err)
		}
		if got.GetLinux().GetCgroupParent() != parent {
			t.Errorf("cgroup_parent = %q, want %q", got.GetLinux().GetCgroupParent(), parent)
		}
	}
}
