package containerconfig

import (
	"fmt"
	"maps"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/berthk8s/berth/internal/podkit/podutil"
	"github.com/berthk8s/berth/internal/podkit/sysctl"
)

// hostnameMaxLen caps a pod hostname: 64 bytes with the terminating NUL.
const hostnameMaxLen = 63

// podHostname is spec.hostname or the pod name, cut to 63 characters
// without a trailing '-' or '.' (upstream truncatePodHostnameIfNeeded).
func podHostname(pod *corev1.Pod) (string, error) {
	hostname := pod.Name
	if pod.Spec.Hostname != "" {
		if msgs := validation.IsDNS1123Label(pod.Spec.Hostname); len(msgs) > 0 {
			return "", fmt.Errorf("pod Hostname %q is not a valid DNS label: %s", pod.Spec.Hostname, strings.Join(msgs, ";"))
		}
		hostname = pod.Spec.Hostname
	}
	return truncateHostname(pod, hostname)
}

// truncateHostname cuts a pod hostname to 63 characters without a
// trailing '-' or '.' (upstream truncatePodHostnameIfNeeded).
func truncateHostname(pod *corev1.Pod, hostname string) (string, error) {
	if len(hostname) <= hostnameMaxLen {
		return hostname, nil
	}
	truncated := strings.TrimRight(hostname[:hostnameMaxLen], "-.")
	if truncated == "" {
		return "", fmt.Errorf("hostname for pod %q was invalid: %q", pod.Name, hostname)
	}
	return truncated, nil
}

// HostnameAndDomain is the pod's hostname and, with spec.subdomain, its
// domain <subdomain>.<namespace>.svc.<clusterDomain> (upstream
// GeneratePodHostNameAndDomain). spec.hostnameOverride (HostnameOverride,
// beta and on in v1.37) replaces both: the pod's hostname is the override,
// a DNS subdomain, and it has no domain. The /etc/hosts file names the
// pod by both.
func HostnameAndDomain(pod *corev1.Pod, clusterDomain string) (hostname, domain string, err error) {
	if o := pod.Spec.HostnameOverride; o != nil {
		if msgs := validation.IsDNS1123Subdomain(*o); len(msgs) > 0 {
			return "", "", fmt.Errorf("pod HostnameOverride %q is not a valid DNS subdomain: %s", *o, strings.Join(msgs, ";"))
		}
		hostname, err = truncateHostname(pod, *o)
		return hostname, "", err
	}
	if hostname, err = podHostname(pod); err != nil {
		return "", "", err
	}
	if sub := pod.Spec.Subdomain; sub != "" {
		if msgs := validation.IsDNS1123Label(sub); len(msgs) > 0 {
			return "", "", fmt.Errorf("pod Subdomain %q is not a valid DNS label: %s", sub, strings.Join(msgs, ";"))
		}
		domain = fmt.Sprintf("%s.%s.svc.%s", sub, pod.Namespace, clusterDomain)
	}
	return hostname, domain, nil
}

// fqdnMaxLen is the room in the kernel's nodename field.
const fqdnMaxLen = 64

// kernelHostname is the hostname the sandbox gets: the FQDN
// <hostname>.<domain> when setHostnameAsFQDN is true and the pod has a
// domain, else the hostname (upstream GetNodenameForKernel).
func kernelHostname(hostname, domain string, setHostnameAsFQDN *bool) (string, error) {
	if domain == "" || setHostnameAsFQDN == nil || !*setHostnameAsFQDN {
		return hostname, nil
	}
	fqdn := hostname + "." + domain
	if len(fqdn) > fqdnMaxLen {
		return "", fmt.Errorf("failed to construct FQDN from pod hostname and cluster domain, FQDN %s is too long (%d characters is the max, %d characters requested)",
			fqdn, fqdnMaxLen, len(fqdn))
	}
	return fqdn, nil
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

// SandboxParams is everything the sandbox config is built from.
type SandboxParams struct {
	Pod     *corev1.Pod
	Attempt uint32
	// PodLogsDir is the root of pod log directories (/var/log/pods).
	PodLogsDir string
	// DNS is the node's resolv.conf, clusterDNS and clusterDomain.
	DNS DNS
	// DefaultSysctls are the kubelet's defaultPodSysctls, which every
	// sandbox gets unless the pod sets the same name.
	DefaultSysctls sysctl.Defaults
	// CgroupParent is the pod's cgroup (internal/node/cm, in the cgroup
	// driver's form), or "" for the runtime's default.
	CgroupParent string
	// ExtraGroups are the supplemental groups the pod's volumes add
	// (ContainerParams.ExtraGroups); the sandbox gets them only when the
	// pod has a security context, as upstream's.
	ExtraGroups []int64
	// Resources shape the sandbox's and the overhead's Linux resources.
	Resources ResourceSettings
	// UserNamespace is the pod's own user namespace (hostUsers: false),
	// nil for the host's.
	UserNamespace *UserNamespace
}

// Sandbox builds the PodSandboxConfig for a pod (upstream
// generatePodSandboxConfig). The caller reads resolv.conf, creates the log
// directory and records the warning events returned.
func Sandbox(p SandboxParams) (*runtimeapi.PodSandboxConfig, []Event, error) {
	pod := p.Pod
	dns, events := podDNSConfig(pod, p.DNS)
	cfg := &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{
			Name:      pod.Name,
			Namespace: pod.Namespace,
			Uid:       string(pod.UID),
			Attempt:   p.Attempt,
		},
		LogDirectory: podutil.LogDir(p.PodLogsDir, pod.Namespace, pod.Name, pod.UID),
		DnsConfig:    dns,
		PortMappings: portMappings(pod),
		Labels:       podLabels(pod),
		Annotations:  maps.Clone(pod.Annotations),
		Linux:        sandboxLinuxConfig(pod, p),
	}
	// A host-network pod keeps the node's hostname.
	if !pod.Spec.HostNetwork {
		hostname, domain, err := HostnameAndDomain(pod, p.DNS.ClusterDomain)
		if err != nil {
			return nil, nil, err
		}
		if cfg.Hostname, err = kernelHostname(hostname, domain, pod.Spec.SetHostnameAsFQDN); err != nil {
			return nil, nil, err
		}
	}
	return cfg, events, nil
}
