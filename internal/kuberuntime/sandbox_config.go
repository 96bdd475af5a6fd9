package kuberuntime

import (
	"fmt"
	"maps"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// hostnameMaxLen caps a pod hostname: 64 bytes with the terminating NUL.
const hostnameMaxLen = 63

// podLogDir is the pod's log directory: <podLogsDir>/<namespace>_<name>_<uid>.
func podLogDir(podLogsDir string, pod *corev1.Pod) string {
	return filepath.Join(podLogsDir, fmt.Sprintf("%s_%s_%s", pod.Namespace, pod.Name, pod.UID))
}

// podHostname is spec.hostname or the pod name, cut to 63 characters
// without a trailing '-' or '.' (upstream truncatePodHostnameIfNeeded).
func podHostname(pod *corev1.Pod) (string, error) {
	hostname := pod.Name
	if pod.Spec.Hostname != "" {
		hostname = pod.Spec.Hostname
	}
	if len(hostname) <= hostnameMaxLen {
		return hostname, nil
	}
	truncated := strings.TrimRight(hostname[:hostnameMaxLen], "-.")
	if truncated == "" {
		return "", fmt.Errorf("hostname for pod %q was invalid: %q", pod.Name, hostname)
	}
	return truncated, nil
}

// toRuntimeProtocol maps a port protocol; unknown protocols read as TCP.
func toRuntimeProtocol(p corev1.Protocol) runtimeapi.Protocol {
	switch p {
	case corev1.ProtocolUDP:
		return runtimeapi.Protocol_UDP
	case corev1.ProtocolSCTP:
		return runtimeapi.Protocol_SCTP
	}
	return runtimeapi.Protocol_TCP
}

// portMappings are the host ports of the pod's containers, in spec order.
func portMappings(pod *corev1.Pod) []*runtimeapi.PortMapping {
	var out []*runtimeapi.PortMapping
	for i := range pod.Spec.Containers {
		for _, p := range pod.Spec.Containers[i].Ports {
			if p.HostPort == 0 {
				continue
			}
			out = append(out, &runtimeapi.PortMapping{
				Protocol:      toRuntimeProtocol(p.Protocol),
				ContainerPort: p.ContainerPort,
				HostPort:      p.HostPort,
				HostIp:        p.HostIP,
			})
		}
	}
	return out
}

// sandboxParams is everything the sandbox config is built from.
type sandboxParams struct {
	Pod     *corev1.Pod
	Attempt uint32
	// PodLogsDir is the root of pod log directories (/var/log/pods).
	PodLogsDir string
	// Host is the node's parsed resolv.conf.
	Host hostDNS
}

// buildSandboxConfig builds the PodSandboxConfig for a pod (upstream
// generatePodSandboxConfig). It is pure: the caller reads resolv.conf and
// creates the log directory.
func buildSandboxConfig(p sandboxParams) (*runtimeapi.PodSandboxConfig, error) {
	pod := p.Pod
	cfg := &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{
			Name:      pod.Name,
			Namespace: pod.Namespace,
			Uid:       string(pod.UID),
			Attempt:   p.Attempt,
		},
		LogDirectory: podLogDir(p.PodLogsDir, pod),
		DnsConfig:    podDNSConfig(pod, p.Host),
		PortMappings: portMappings(pod),
		Labels:       podLabels(pod),
		Annotations:  maps.Clone(pod.Annotations),
		Linux:        sandboxLinuxConfig(pod),
	}
	// A host-network pod keeps the node's hostname.
	if !pod.Spec.HostNetwork {
		hostname, err := podHostname(pod)
		if err != nil {
			return nil, err
		}
		cfg.Hostname = hostname
	}
	return cfg, nil
}
