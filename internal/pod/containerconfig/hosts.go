package containerconfig

import (
	"bytes"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// EtcHostsPath is where containers find the managed hosts file.
const EtcHostsPath = "/etc/hosts"

// Headers of the managed hosts file, as upstream writes them.
const (
	managedHostsHeader            = "# Kubernetes-managed hosts file.\n"
	managedHostsHeaderHostNetwork = "# Kubernetes-managed hosts file (host network).\n"
)

// ManagedHosts is the /etc/hosts of a pod with its own network
// (upstream managedHostsFileContent): localhost entries, one line per pod
// IP naming the pod by its FQDN and hostname (or hostname alone without a
// domain), then the pod's hostAliases.
func ManagedHosts(ips []string, hostname, domain string, aliases []corev1.HostAlias) []byte {
	var b bytes.Buffer
	b.WriteString(managedHostsHeader)
	b.WriteString("127.0.0.1\tlocalhost\n")
	b.WriteString("::1\tlocalhost ip6-localhost ip6-loopback\n")
	b.WriteString("fe00::\tip6-localnet\n")
	b.WriteString("fe00::0\tip6-mcastprefix\n")
	b.WriteString("fe00::1\tip6-allnodes\n")
	b.WriteString("fe00::2\tip6-allrouters\n")
	for _, ip := range ips {
		if domain != "" {
			fmt.Fprintf(&b, "%s\t%s.%s\t%s\n", ip, hostname, domain, hostname)
		} else {
			fmt.Fprintf(&b, "%s\t%s\n", ip, hostname)
		}
	}
	b.Write(hostAliasEntries(aliases))
	return b.Bytes()
}

// HostNetworkHosts is the /etc/hosts of a host-network pod
// (upstream nodeHostsFileContent): the node's hosts file, then the pod's
// hostAliases.
func HostNetworkHosts(node []byte, aliases []corev1.HostAlias) []byte {
	var b bytes.Buffer
	b.WriteString(managedHostsHeaderHostNetwork)
	b.Write(node)
	b.Write(hostAliasEntries(aliases))
	return b.Bytes()
}

// hostAliasEntries is one line per hostAlias, its hostnames tab-separated.
func hostAliasEntries(aliases []corev1.HostAlias) []byte {
	if len(aliases) == 0 {
		return nil
	}
	var b bytes.Buffer
	b.WriteString("\n# Entries added by HostAliases.\n")
	for _, a := range aliases {
		fmt.Fprintf(&b, "%s\t%s\n", a.IP, strings.Join(a.Hostnames, "\t"))
	}
	return b.Bytes()
}

// MountsEtcHosts reports whether the container mounts a volume at
// /etc/hosts itself, in which case berth leaves its /etc/hosts alone.
func MountsEtcHosts(c *corev1.Container) bool {
	for _, vm := range c.VolumeMounts {
		if vm.MountPath == EtcHostsPath {
			return true
		}
	}
	return false
}
