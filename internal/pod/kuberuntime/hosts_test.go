package kuberuntime

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

const localhostEntries = "127.0.0.1\tlocalhost\n" +
	"::1\tlocalhost ip6-localhost ip6-loopback\n" +
	"fe00::\tip6-localnet\n" +
	"fe00::0\tip6-mcastprefix\n" +
	"fe00::1\tip6-allnodes\n" +
	"fe00::2\tip6-allrouters\n"

func TestSyncPodHostsFile(t *testing.T) {
	tests := []struct {
		name      string
		mutate    func(*corev1.Pod)
		wantMount bool
		want      func(ip string) string
	}{
		{
			name:      "pod network with subdomain and aliases",
			wantMount: true,
			mutate: func(p *corev1.Pod) {
				p.Spec.Subdomain = "sub"
				p.Spec.HostAliases = []corev1.HostAlias{{IP: "10.1.2.3", Hostnames: []string{"foo.local"}}}
			},
			want: func(ip string) string {
				return "# Kubernetes-managed hosts file.\n" + localhostEntries + ip + "\tweb.sub.default.svc.cluster.local\tweb\n" +
					"\n# Entries added by HostAliases.\n10.1.2.3\tfoo.local\n"
			},
		},
		{
			name:      "host network",
			wantMount: true,
			mutate:    func(p *corev1.Pod) { p.Spec.HostNetwork = true },
			want: func(string) string {
				return "# Kubernetes-managed hosts file (host network).\n127.0.0.1\tlocalhost node\n"
			},
		},
		{
			name: "container mounting /etc/hosts itself",
			mutate: func(p *corev1.Pod) {
				p.Spec.Volumes = []corev1.Volume{{Name: "h"}}
				p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "h", MountPath: "/etc/hosts"}}
			},
		},
	}
	// On an SELinux host the runtime relabels the file, as upstream's
	// makeHostsMount asks and makeMounts passes on when SELinux is on.
	for _, tt := range tests {
		for _, selinux := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, SELinux %v", tt.name, selinux), func(t *testing.T) {
				e := newEnv(t, func(c *Config) { c.Machine.SELinux = selinux })
				e.fake.AddImage("busybox:1.36")
				pod := basePod()
				tt.mutate(pod)
				volDir := t.TempDir()
				res, err := e.apply(pod, e.status(pod), nil, map[string]string{"h": volDir})
				if err != nil || len(res.Failures) != 0 {
					t.Fatalf("Apply: %v, failures %v", err, res.Failures)
				}
				path := filepath.Join(e.pods, "uid-1", "etc-hosts")
				var hostsMounts []*runtimeapi.Mount
				for _, c := range e.fake.Containers() {
					for _, m := range c.GetMounts() {
						if m.GetContainerPath() == "/etc/hosts" && m.GetHostPath() == path {
							hostsMounts = append(hostsMounts, m)
						}
					}
				}
				if !tt.wantMount {
					if len(hostsMounts) != 0 {
						t.Errorf("managed /etc/hosts mounted: %v", hostsMounts)
					}
					return
				}
				want := []*runtimeapi.Mount{{HostPath: path, ContainerPath: "/etc/hosts", SelinuxRelabel: selinux}}
				if diff := cmp.Diff(want, hostsMounts, protocmp.Transform()); diff != "" {
					t.Errorf("hosts mounts (-want +got):\n%s", diff)
				}
				got, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				ip := ""
				if sb := e.status(pod).LatestSandbox(); sb != nil && len(sb.IPs) > 0 {
					ip = sb.IPs[0]
				}
				if diff := cmp.Diff(tt.want(ip), string(got)); diff != "" {
					t.Errorf("hosts file (-want +got):\n%s", diff)
				}
			})
		}
	}
}
