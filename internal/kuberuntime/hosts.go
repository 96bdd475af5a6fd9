package kuberuntime

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/berthk8s/berth/internal/containerconfig"
)

// etcHostsPath is where containers find the managed hosts file, and the
// node's own hosts file unless Config.NodeHostsFile says otherwise.
const etcHostsPath = "/etc/hosts"

// Headers of the managed hosts file, as upstream writes them.
const (
	managedHostsHeader            = "# Kubernetes-managed hosts file.\n"
	managedHostsHeaderHostNetwork = "# Kubernetes-managed hosts file (host network).\n"
)

// managedHostsContent is the /etc/hosts of a pod with its own network
// (upstream managedHostsFileContent): localhost entries, one line per pod
// IP naming the pod by its FQDN and hostname (or hostname alone without a
// domain), then the pod's hostAliases.
func managedHostsContent(ips []string, hostname, domain string, aliases []corev1.HostAlias) []byte {
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

// hostNetworkHostsContent is the /etc/hosts of a host-network pod
// (upstream nodeHostsFileContent): the node's hosts file, then the pod's
// hostAliases.
func hostNetworkHostsContent(node []byte, aliases []corev1.HostAlias) []byte {
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

// mountsEtcHosts reports whether the container mounts a volume at
// /etc/hosts itself, in which case berth leaves its /etc/hosts alone.
func mountsEtcHosts(c *corev1.Container) bool {
	for _, vm := range c.VolumeMounts {
		if vm.MountPath == etcHostsPath {
			return true
		}
	}
	return false
}

// hostsMount (re)writes the pod's managed hosts file,
// <PodsDir>/<uid>/etc-hosts, and returns its mount at /etc/hosts (upstream
// makeHostsMount). It returns nil when the container mounts /etc/hosts
// itself, or when a pod with its own network has no IP yet, as upstream.
// The pod IPs are read from the sandbox's status, known only once it runs.
func (m *Manager) hostsMount(ctx context.Context, t startTarget) (*runtimeapi.Mount, error) {
	pod := t.Pod
	if mountsEtcHosts(t.Container) {
		return nil, nil
	}
	var content []byte
	if pod.Spec.HostNetwork {
		path := m.cfg.NodeHostsFile
		if path == "" {
			path = etcHostsPath
		}
		node, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("read hosts file %q: %w", path, err)
		}
		content = hostNetworkHostsContent(node, pod.Spec.HostAliases)
	} else {
		resp, err := m.cfg.Runtime.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: t.SandboxID})
		if err != nil {
			return nil, fmt.Errorf("read pod sandbox %q status: %w", t.SandboxID, err)
		}
		ips := sandboxFromStatus(resp.GetStatus()).IPs
		if len(ips) == 0 {
			return nil, nil
		}
		hostname, domain, err := containerconfig.HostnameAndDomain(pod, m.cfg.ClusterDomain)
		if err != nil {
			return nil, err
		}
		content = managedHostsContent(ips, hostname, domain, pod.Spec.HostAliases)
	}
	dir := filepath.Join(m.cfg.PodsDir, string(pod.UID))
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("create pod directory %q: %w", dir, err)
	}
	// Written in place, not renamed: running containers bind-mount this
	// inode and see the new content.
	path := filepath.Join(dir, "etc-hosts")
	if err := os.WriteFile(path, content, 0o644); err != nil {
		return nil, fmt.Errorf("write hosts file %q: %w", path, err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		return nil, fmt.Errorf("set hosts file permissions %q: %w", path, err)
	}
	return &runtimeapi.Mount{HostPath: path, ContainerPath: etcHostsPath, SelinuxRelabel: true}, nil
}

// addHostsMount appends the managed /etc/hosts mount, if any, to the
// container's config.
func (m *Manager) addHostsMount(ctx context.Context, t startTarget, cfg *runtimeapi.ContainerConfig) error {
	mount, err := m.hostsMount(ctx, t)
	if err != nil || mount == nil {
		return err
	}
	cfg.Mounts = append(cfg.Mounts, mount)
	return nil
}
