package kuberuntime

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/berthk8s/berth/internal/pod/containerconfig"
)

// etcHostsPath is where containers find the managed hosts file, and the
// node's own hosts file unless Config.NodeHostsFile says otherwise.
const etcHostsPath = containerconfig.EtcHostsPath

// hostsMount (re)writes the pod's managed hosts file,
// <PodsDir>/<uid>/etc-hosts, and returns its mount at /etc/hosts (upstream
// makeHostsMount). It returns nil when the container mounts /etc/hosts
// itself, or when a pod with its own network has no IP yet, as upstream.
// The pod IPs are read from the sandbox's status, known only once it runs.
func (m *Manager) hostsMount(ctx context.Context, t startTarget) (*runtimeapi.Mount, error) {
	pod := t.Pod
	if containerconfig.MountsEtcHosts(t.Container) {
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
		content = containerconfig.HostNetworkHosts(node, pod.Spec.HostAliases)
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
		content = containerconfig.ManagedHosts(ips, hostname, domain, pod.Spec.HostAliases)
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
	// Relabelled where SELinux is on: upstream's makeHostsMount asks for it
	// and its makeMounts passes it on only when selinux.GetEnabled().
	return &runtimeapi.Mount{HostPath: path, ContainerPath: etcHostsPath, SelinuxRelabel: m.node.SELinux}, nil
}
