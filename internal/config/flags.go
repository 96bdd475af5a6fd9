package config

import (
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	cliflag "k8s.io/component-base/cli/flag"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	kubeletapis "k8s.io/kubelet/pkg/apis"
)

// Default flag values: the directories as upstream (TestDefaultsMatchUpstream).
// The sandbox image is berth's own: upstream v1.37 has no
// --pod-infra-container-image (see berthOnlyFlags in upstream_test.go).
const (
	DefaultRootDir                = "/var/lib/kubelet"
	DefaultCertDir                = "/var/lib/kubelet/pki"
	DefaultPodInfraContainerImage = "registry.k8s.io/pause:3.10.1"
	// DefaultPLEGRelistPeriod is upstream's fixed relist period
	// (genericPlegRelistPeriod), which --pleg-relist-period (berth's own)
	// may lengthen.
	DefaultPLEGRelistPeriod = time.Second
	// DefaultDevicePluginDir is upstream's fixed device plugin directory
	// (pluginapi.DevicePluginPath): the device manager's registration
	// socket, kubelet.sock, and its checkpoint are there whatever the root
	// directory, and device plugins (NVIDIA's, AMD's, ...) dial that path.
	// --device-plugin-dir (berth's own) moves it, for tests that run
	// several nodes on one host.
	DefaultDevicePluginDir = "/var/lib/kubelet/device-plugins"
)

// Flags holds the upstream kubelet command-line flags, as the user typed
// them: every flag the v1.37 kubelet registers (see flagSupport), plus
// berth's --pod-infra-container-image. Parsing and validation happen in Load.
//
// A Flags is filled by a pflag.FlagSet during parsing and is read-only after
// that; it is not safe for concurrent mutation.
type Flags struct {
	ConfigFile             string
	ConfigDir              string
	Kubeconfig             string
	BootstrapKubeconfig    string
	HostnameOverride       string
	NodeIP                 string
	RootDir                string
	CertDir                string
	NodeLabels             map[string]string
	SeccompDefault         bool
	PodInfraContainerImage string
	// PLEGRelistPeriod is berth's --pleg-relist-period: the period of the
	// PLEG's full relist (upstream's is fixed at one second).
	PLEGRelistPeriod time.Duration
	// DevicePluginDir is berth's --device-plugin-dir: the device plugin
	// directory (upstream's is fixed at DefaultDevicePluginDir).
	DevicePluginDir string
	// ImageCredentialProviderConfig and ImageCredentialProviderBinDir are
	// the credential provider plugins' config (file or directory) and
	// binaries.
	ImageCredentialProviderConfig string
	ImageCredentialProviderBinDir string
	LockFile                      string
	ExitOnLockContention          bool

	// kubelet holds the values of the flags that set KubeletConfiguration
	// fields (configFlags); Load copies those given explicitly over the
	// file. Its other fields are only the defaults the help shows.
	kubelet kubeletconfigv1beta1.KubeletConfiguration

	// fs is the flag set AddFlags registered into; it answers IsSet.
	fs *pflag.FlagSet
}

// NewFlags returns Flags holding the upstream defaults.
func NewFlags() *Flags {
	f := &Flags{
		RootDir:                DefaultRootDir,
		CertDir:                DefaultCertDir,
		PodInfraContainerImage: DefaultPodInfraContainerImage,
		PLEGRelistPeriod:       DefaultPLEGRelistPeriod,
		DevicePluginDir:        DefaultDevicePluginDir,
		NodeLabels:             map[string]string{},
	}
	// The help shows the defaults of a command line without --config, as
	// upstream's: the v1beta1 defaults over its legacy ones.
	if kc, err := fromObject(legacyDefaults()); err == nil {
		f.kubelet = *kc
	}
	SetDefaults(&f.kubelet)
	return f
}

// AddFlags registers every flag under its upstream name, type and default
// into fs. The usage of each says what berth does with it (flagSupport);
// config flags are marked deprecated as upstream marks them. IsSet then
// reports what fs parsed.
//
// Like upstream, fs takes "_" for "-" in flag names (--max_pods).
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	f.fs = fs
	fs.SetNormalizeFunc(cliflag.WordSepNormalizeFunc)
	fs.StringVar(&f.ConfigFile, "config", f.ConfigFile, "")
	fs.StringVar(&f.ConfigDir, "config-dir", f.ConfigDir, "")
	fs.StringVar(&f.Kubeconfig, "kubeconfig", f.Kubeconfig, "")
	fs.StringVar(&f.BootstrapKubeconfig, "bootstrap-kubeconfig", f.BootstrapKubeconfig, "")
	fs.StringVar(&f.HostnameOverride, "hostname-override", f.HostnameOverride, "")
	fs.StringVar(&f.NodeIP, "node-ip", f.NodeIP, "")
	fs.StringVar(&f.CertDir, "cert-dir", f.CertDir, "")
	fs.StringVar(&f.RootDir, "root-dir", f.RootDir, "")
	fs.BoolVar(&f.SeccompDefault, "seccomp-default", f.SeccompDefault, "")
	if f.NodeLabels == nil {
		f.NodeLabels = map[string]string{}
	}
	labels := cliflag.ConfigurationMap(f.NodeLabels)
	fs.Var(&labels, "node-labels", "")
	fs.StringVar(&f.PodInfraContainerImage, "pod-infra-container-image", f.PodInfraContainerImage, "")
	fs.DurationVar(&f.PLEGRelistPeriod, "pleg-relist-period", f.PLEGRelistPeriod, "")
	fs.StringVar(&f.DevicePluginDir, "device-plugin-dir", f.DevicePluginDir, "")
	fs.StringVar(&f.ImageCredentialProviderConfig, "image-credential-provider-config", f.ImageCredentialProviderConfig, "")
	fs.StringVar(&f.ImageCredentialProviderBinDir, "image-credential-provider-bin-dir", f.ImageCredentialProviderBinDir, "")
	fs.StringVar(&f.LockFile, "lock-file", f.LockFile, "")
	fs.BoolVar(&f.ExitOnLockContention, "exit-on-lock-contention", f.ExitOnLockContention, "")
	for _, u := range unboundFlags() {
		u.register(fs)
	}
	bindConfigFlags(fs, &f.kubelet)
	describeFlags(fs)
}

// IsSet reports whether the flag with the given name (no dashes) was given
// explicitly on the command line, as pflag's Changed.
func (f *Flags) IsSet(name string) bool {
	if f.fs == nil {
		return false
	}
	return f.fs.Changed(name)
}

// unbound returns the value of an unboundFlags flag ("" when it is not
// registered, as in tests that build Flags by hand).
func (f *Flags) unbound(name string) string {
	if f.fs == nil {
		return ""
	}
	if fl := f.fs.Lookup(name); fl != nil {
		return fl.Value.String()
	}
	return ""
}

// unboundFlag is an upstream flag berth registers without a field of
// Flags: one it does not honour, accepted at its default and rejected
// otherwise (flagSupport says why), or one Load reads back from the flag
// set (unbound).
type unboundFlag struct {
	Name, Type, Default string
	// Deprecated is upstream's deprecation notice, if any.
	Deprecated string
}

const deprecatedGCFlag = "Use --eviction-hard or --eviction-soft instead. Will be removed in a future version."

// unboundFlags are upstream's KubeletFlags flags without a Flags field, in
// upstream's order, with upstream's types and defaults (NewKubeletFlags).
func unboundFlags() []unboundFlag {
	return []unboundFlag{
		{"cloud-provider", "string", "", ""},
		{"minimum-container-ttl-duration", "duration", "0s", deprecatedGCFlag},
		{"maximum-dead-containers-per-container", "int32", "1", deprecatedGCFlag},
		{"maximum-dead-containers", "int32", "-1", deprecatedGCFlag},
		{"experimental-mounter-path", "string", "", "will be removed in 1.25 or later. in favor of using CSI."},
		{"experimental-allocatable-ignore-eviction", "bool", "false", "will be removed in 1.25 or later."},
		{"runtime-cgroups", "string", "", ""},
		// AddGlobalFlags: cAdvisor's housekeeping_interval, default
		// overridden by pkg/kubelet/cadvisor.
		{"housekeeping-interval", "duration", "10s", ""},
	}
}

// register adds u to fs with a variable of its own; the value is read back
// through fs.
func (u unboundFlag) register(fs *pflag.FlagSet) {
	switch u.Type {
	case "string":
		fs.String(u.Name, u.Default, "")
	case "bool":
		fs.Bool(u.Name, u.Default == "true", "")
	case "int32":
		n, _ := strconv.ParseInt(u.Default, 10, 32)
		fs.Int32(u.Name, int32(n), "")
	case "duration":
		d, _ := time.ParseDuration(u.Default)
		fs.Duration(u.Name, d, "")
	default:
		panic(fmt.Sprintf("unboundFlag %q: unknown type %q", u.Name, u.Type))
	}
	fs.Lookup(u.Name).Deprecated = u.Deprecated
}

// describeFlags sets the usage of every flag in fs from flagSupport, so the
// help says exactly what berth does, and marks the config flags deprecated
// as upstream does.
func describeFlags(fs *pflag.FlagSet) {
	fields := map[string]string{}
	for _, c := range configFlags() {
		fields[c.Name] = c.Field
	}
	keep := notDeprecatedFlags()
	for _, s := range flagSupport() {
		fl := fs.Lookup(strings.TrimPrefix(s.Name, "--"))
		if fl == nil {
			continue
		}
		fl.Usage = flagUsage(s, fields[fl.Name])
		if fields[fl.Name] != "" && !keep[fl.Name] {
			fl.Deprecated = deprecatedConfigFlag
		}
	}
}

func flagUsage(s FieldSupport, field string) string {
	var b strings.Builder
	if field != "" {
		fmt.Fprintf(&b, "Sets %s of the KubeletConfiguration. ", field)
	}
	fmt.Fprintf(&b, "berth: %s", s.Support)
	if s.Reason != "" {
		fmt.Fprintf(&b, "; %s", s.Reason)
	}
	b.WriteString(".")
	return b.String()
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
