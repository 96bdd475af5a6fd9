package containerconfig

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

const localhostEntries = "127.0.0.1\tlocalhost\n" +
	"::1\tlocalhost ip6-localhost ip6-loopback\n" +
	"fe00::\tip6-localnet\n" +
	"fe00::0\tip6-mcastprefix\n" +
	"fe00::1\tip6-allnodes\n" +
	"fe00::2\tip6-allrouters\n"

func TestManagedHostsContent(t *testing.T) {
	aliases := []corev1.HostAlias{
		{IP: "10.1.2.3", Hostnames: []string{"foo.local", "bar.local"}},
		{IP: "fd00::5", Hostnames: []string{"v6.local"}},
	}
	tests := []struct {
		name     string
		ips      []string
		hostname string
		domain   string
		aliases  []corev1.HostAlias
		want     string
	}{
		{
			name: "hostname only", ips: []string{"10.88.0.2"}, hostname: "web",
			want: "# Kubernetes-managed hosts file.\n" + localhostEntries + "10.88.0.2\tweb\n",
		},
		{
			name: "subdomain gives the FQDN first", ips: []string{"10.88.0.2"}, hostname: "web", domain: "sub.ns.svc.cluster.local",
			want: "# Kubernetes-managed hosts file.\n" + localhostEntries + "10.88.0.2\tweb.sub.ns.svc.cluster.local\tweb\n",
		},
		{
			name: "dual stack: a line per IP", ips: []string{"10.88.0.2", "fd00:10:88::2"}, hostname: "web", domain: "s.ns.svc.c",
			want: "# Kubernetes-managed hosts file.\n" + localhostEntries +
				"10.88.0.2\tweb.s.ns.svc.c\tweb\n" + "fd00:10:88::2\tweb.s.ns.svc.c\tweb\n",
		},
		{
			name: "host aliases", ips: []string{"10.88.0.2"}, hostname: "web", aliases: aliases,
			want: "# Kubernetes-managed hosts file.\n" + localhostEntries + "10.88.0.2\tweb\n" +
				"\n# Entries added by HostAliases.\n" + "10.1.2.3\tfoo.local\tbar.local\n" + "fd00::5\tv6.local\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(ManagedHosts(tt.ips, tt.hostname, tt.domain, tt.aliases))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("managedHostsContent (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHostNetworkHostsContent(t *testing.T) {
	node := []byte("127.0.0.1 localhost\n192.168.1.5 node1\n")
	tests := []struct {
		name    string
		aliases []corev1.HostAlias
		want    string
	}{
		{name: "node file", want: "# Kubernetes-managed hosts file (host network).\n127.0.0.1 localhost\n192.168.1.5 node1\n"},
		{
			name: "node file and aliases", aliases: []corev1.HostAlias{{IP: "10.1.2.3", Hostnames: []string{"foo"}}},
			want: "# Kubernetes-managed hosts file (host network).\n127.0.0.1 localhost\n192.168.1.5 node1\n" +
				"\n# Entries added by HostAliases.\n10.1.2.3\tfoo\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, string(HostNetworkHosts(node, tt.aliases))); diff != "" {
				t.Errorf("hostNetworkHostsContent (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSyncPodHostsFile starts containers through the CRI fake and checks
// the managed /etc/hosts mount and file.
