package config

import (
	"fmt"
	"net"
	"sort"
	"strings"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	kubeletapis "k8s.io/kubelet/pkg/apis"
)

// Default flag values: the directories as upstream (TestDefaultsMatchUpstream).
// The sandbox image is berth's own: upstream v1.37 has no
// --pod-infra-container-image (see berthOnlyFlags in upstream_test.go).
const (
	DefaultRootDir                = "/var/lib/kubelet"
	DefaultCertDir                = "/var/lib/kubelet/pki"
	DefaultPodInfraContainerImage = "registry.k8s.io/pause:3.10.1"
)

// Flags holds the upstream kubelet command-line flags berth accepts, as the
// user typed them. Parsing and validation happen in Load.
//
// A Flags is filled by a pflag.FlagSet during parsing and is read-only after
// that; it is not safe for concurrent mutation.
type Flags struct {
	ConfigFile               string
	ConfigDir                string
	Kubeconfig               string
	BootstrapKubeconfig      string
	HostnameOverride         string
	NodeIP                   string
	RootDir                  string
	CertDir                  string
	ContainerRuntimeEndpoint string
	ImageServiceEndpoint     string
	PodManifestPath          string
	NodeLabels               []string // "key=value" items
	RegisterWithTaints       []string // "key=value:Effect" items
	PodInfraContainerImage   string
	Verbosity                int

	// fs is the flag set AddFlags registered into; it answers IsSet.
	fs *pflag.FlagSet
}

// NewFlags returns Flags holding the upstream defaults.
func NewFlags() *Flags {
	return &Flags{
		RootDir:                DefaultRootDir,
		CertDir:                DefaultCertDir,
		PodInfraContainerImage: DefaultPodInfraContainerImage,
	}
}

// AddFlags registers the flags under their upstream names into fs, with the
// current values of f as defaults. IsSet then reports what fs parsed.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	f.fs = fs
	fs.StringVar(&f.ConfigFile, "config", f.ConfigFile, "Path to a KubeletConfiguration file (YAML or JSON). Flags override its values.")
	fs.StringVar(&f.ConfigDir, "config-dir", f.ConfigDir, "Directory of *.conf KubeletConfiguration drop-ins, merged in lexical order over --config.")
	fs.StringVar(&f.Kubeconfig, "kubeconfig", f.Kubeconfig, "Path to a kubeconfig for the API server (cluster mode: not supported yet).")
	fs.StringVar(&f.BootstrapKubeconfig, "bootstrap-kubeconfig", f.BootstrapKubeconfig, "Path to a bootstrap kubeconfig (cluster mode: not supported yet).")
	fs.StringVar(&f.HostnameOverride, "hostname-override", f.HostnameOverride, "Use this string as the node name instead of the actual hostname.")
	fs.StringVar(&f.NodeIP, "node-ip", f.NodeIP, "IP address (or comma-separated dual-stack IP addresses) of the node.")
	fs.StringVar(&f.RootDir, "root-dir", f.RootDir, "Directory path for managing berth's files (volume mounts, etc).")
	fs.StringVar(&f.CertDir, "cert-dir", f.CertDir, "Directory where TLS certs are located (cluster mode).")
	fs.StringVar(&f.ContainerRuntimeEndpoint, "container-runtime-endpoint", f.ContainerRuntimeEndpoint, "CRI runtime service endpoint; overrides containerRuntimeEndpoint in --config.")
	fs.StringVar(&f.ImageServiceEndpoint, "image-service-endpoint", f.ImageServiceEndpoint, "CRI image service endpoint; overrides imageServiceEndpoint in --config.")
	fs.StringVar(&f.PodManifestPath, "pod-manifest-path", f.PodManifestPath, "Static pod file or directory; overrides staticPodPath in --config.")
	fs.StringSliceVar(&f.NodeLabels, "node-labels", f.NodeLabels, "Labels for the Node object, key=value,... (cluster mode).")
	fs.StringSliceVar(&f.RegisterWithTaints, "register-with-taints", f.RegisterWithTaints, "Taints for the Node object, key=value:Effect,... (cluster mode).")
	fs.StringVar(&f.PodInfraContainerImage, "pod-infra-container-image", f.PodInfraContainerImage, "The sandbox (pause) image.")
	fs.IntVarP(&f.Verbosity, "v", "v", f.Verbosity, "Log verbosity; overrides logging.verbosity in --config.")
}

// IsSet reports whether the flag with the given name (no dashes) was given
// explicitly on the command line, as pflag's Changed.
func (f *Flags) IsSet(name string) bool {
	if f.fs == nil {
		return false
	}
	return f.fs.Changed(name)
}

// parseNodeIPs parses --node-ip: one IP, or a dual-stack pair.
func parseNodeIPs(s string) ([]net.IP, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	parts := strings.Split(s, ",")
	if len(parts) > 2 {
		return nil, fmt.Errorf("must be a single IP or a dual-stack pair of IPs, got %d values", len(parts))
	}
	ips := make([]net.IP, 0, len(parts))
	for _, p := range parts {
		ip := net.ParseIP(strings.TrimSpace(p))
		if ip == nil {
			return nil, fmt.Errorf("%q is not a valid IP address", strings.TrimSpace(p))
		}
		ips = append(ips, ip)
	}
	if len(ips) == 2 {
		if (ips[0].To4() == nil) == (ips[1].To4() == nil) {
			return nil, fmt.Errorf("two IPs must be one IPv4 and one IPv6 address")
		}
		if ips[0].IsUnspecified() || ips[1].IsUnspecified() {
			return nil, fmt.Errorf("a dual-stack pair must not contain an unspecified address")
		}
	}
	return ips, nil
}

// parseNodeLabels parses --node-labels items and applies the upstream rule
// that only a fixed set of kubernetes.io and k8s.io labels may be set by the
// node itself.
func parseNodeLabels(items []string) (map[string]string, error) {
	if len(items) == 0 {
		return nil, nil
	}
	labels := make(map[string]string, len(items))
	var problems []string
	for _, item := range items {
		k, v, ok := strings.Cut(item, "=")
		k = strings.TrimSpace(k)
		v = strings.TrimSpace(v)
		if !ok {
			problems = append(problems, fmt.Sprintf("%q is not key=value", item))
			continue
		}
		for _, msg := range validation.IsQualifiedName(k) {
			problems = append(problems, fmt.Sprintf("key %q: %s", k, msg))
		}
		for _, msg := range validation.IsValidLabelValue(v) {
			problems = append(problems, fmt.Sprintf("value %q of key %q: %s", v, k, msg))
		}
		if isReservedNamespace(k) && !kubeletapis.IsKubeletLabel(k) {
			problems = append(problems, fmt.Sprintf("key %q: unknown 'kubernetes.io' or 'k8s.io' label (a node may only set its allowed labels, or labels under kubelet.kubernetes.io/ and node.kubernetes.io/)", k))
		}
		labels[k] = v
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return labels, nil
}

func labelNamespace(key string) string {
	ns, _, ok := strings.Cut(key, "/")
	if !ok {
		return ""
	}
	return ns
}

func isReservedNamespace(key string) bool {
	ns := labelNamespace(key)
	for _, r := range []string{"kubernetes.io", "k8s.io"} {
		if ns == r || strings.HasSuffix(ns, "."+r) {
			return true
		}
	}
	return false
}

// parseTaints parses --register-with-taints items of the form
// key[=value]:Effect, rejecting duplicates of the same key and effect.
func parseTaints(items []string) ([]corev1.Taint, error) {
	var taints []corev1.Taint
	var problems []string
	seen := map[string]bool{}
	for _, item := range items {
		t, err := parseTaint(strings.TrimSpace(item))
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		id := t.Key + ":" + string(t.Effect)
		if seen[id] {
			problems = append(problems, fmt.Sprintf("duplicate taint %q", id))
			continue
		}
		seen[id] = true
		taints = append(taints, t)
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return taints, nil
}

func parseTaint(s string) (corev1.Taint, error) {
	kv, effect, ok := strings.Cut(s, ":")
	if !ok {
		return corev1.Taint{}, fmt.Errorf("taint %q: want key=value:Effect", s)
	}
	k, v, _ := strings.Cut(kv, "=")
	t := corev1.Taint{Key: k, Value: v, Effect: corev1.TaintEffect(effect)}
	var problems []string
	for _, msg := range validation.IsQualifiedName(k) {
		problems = append(problems, "key: "+msg)
	}
	for _, msg := range validation.IsValidLabelValue(v) {
		problems = append(problems, "value: "+msg)
	}
	switch t.Effect {
	case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
	default:
		problems = append(problems, fmt.Sprintf("effect %q must be one of NoSchedule, PreferNoSchedule, NoExecute", effect))
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return corev1.Taint{}, fmt.Errorf("taint %q: %s", s, strings.Join(problems, ", "))
	}
	return t, nil
}
