package config

import (
	"context"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/klog/v2"
	kubeletconfigv1 "k8s.io/kubelet/config/v1"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/berthk8s/berth/internal/node/cpumanager"
	"github.com/berthk8s/berth/internal/node/topology"
)

// KubernetesVersion is the Kubernetes release whose kubelet berth stands in
// for: its flags, its KubeletConfiguration and its defaults.
const KubernetesVersion = "v1.37.2"

// BerthFlags are the settings of the flags berth has and upstream does
// not (berthOnlyFlags in upstream_test.go says why each is kept).
type BerthFlags struct {
	// PLEGRelistPeriod is --pleg-relist-period: the PLEG's full relist
	// period when longer than upstream's; zero for upstream's
	// DefaultPLEGRelistPeriod.
	PLEGRelistPeriod time.Duration `json:"plegRelistPeriod,omitempty"`
	// DevicePluginDir is the device plugin directory: upstream's fixed
	// DefaultDevicePluginDir, or --device-plugin-dir.
	DevicePluginDir string `json:"devicePluginDir"`
}

// Config is berth's loaded, defaulted and validated configuration.
//
// Load returns a new Config; nothing mutates it afterwards, so it may be read
// from any goroutine.
type Config struct {
	// Kubelet is the KubeletConfiguration after drop-ins, defaults and
	// flags. Fields berth does not honour hold their defaults.
	Kubelet kubeletconfigv1beta1.KubeletConfiguration `json:"kubelet"`

	// Kubeconfig, when set, puts berth in cluster mode. With
	// BootstrapKubeconfig it need not exist yet: bootstrapping writes it
	// (internal/cluster/certificate).
	Kubeconfig          string `json:"kubeconfig,omitempty"`
	BootstrapKubeconfig string `json:"bootstrapKubeconfig,omitempty"`
	// HostnameOverride is --hostname-override as given.
	HostnameOverride string `json:"hostnameOverride,omitempty"`
	// NodeName is the lower-cased hostname override, or the host's name.
	NodeName string `json:"nodeName"`
	// NodeIPs is --node-ip: empty, one IP, or an IPv4/IPv6 pair.
	NodeIPs []net.IP `json:"nodeIPs,omitempty"`
	// LegacyFlags are upstream's KubeletFlags that have no configuration
	// field (embedded: its fields are the Config's, in JSON too).
	LegacyFlags

	RootDir                string `json:"rootDir"`
	CertDir                string `json:"certDir"`
	PodInfraContainerImage string `json:"podInfraContainerImage"`
	// BerthFlags are the settings of berth's own flags (embedded: its
	// fields are the Config's, in JSON too).
	BerthFlags

	// NodeLabels (--node-labels) and RegisterWithTaints (registerWithTaints,
	// or --register-with-taints when given) are what the Node is registered
	// with in cluster mode.
	NodeLabels         map[string]string `json:"nodeLabels,omitempty"`
	RegisterWithTaints []corev1.Taint    `json:"registerWithTaints,omitempty"`

	// Verbosity is the effective log verbosity (logging.verbosity, or -v).
	Verbosity int `json:"verbosity"`

	// ImageCredentialProviderConfig and ImageCredentialProviderBinDir are
	// the flags as given; CredentialProviders is the config they name,
	// loaded and validated (nil when neither flag is given), and
	// CredentialProvidersHash the hash of its files (upstream's
	// kubelet_credential_provider_config_info).
	ImageCredentialProviderConfig string                                    `json:"imageCredentialProviderConfig,omitempty"`
	ImageCredentialProviderBinDir string                                    `json:"imageCredentialProviderBinDir,omitempty"`
	CredentialProviders           *kubeletconfigv1.CredentialProviderConfig `json:"credentialProviders,omitempty"`
	CredentialProvidersHash       string                                    `json:"credentialProvidersHash,omitempty"`
	// LockFile is --lock-file: berth holds an exclusive flock on it while
	// it runs. ExitOnLockContention (--exit-on-lock-contention) makes berth
	// stop when another process opens it.
	LockFile             string `json:"lockFile,omitempty"`
	ExitOnLockContention bool   `json:"exitOnLockContention,omitempty"`

	// ContainerGC is the container garbage collection policy, set by
	// upstream's deprecated flags (see containerGCPolicy).
	ContainerGC ContainerGCPolicy `json:"containerGC"`
	// HousekeepingInterval is --housekeeping-interval, cAdvisor's
	// housekeeping period upstream: how often berth's stats provider
	// samples cumulative CPU time for the usage rates (usageNanoCores).
	HousekeepingInterval metav1.Duration `json:"housekeepingInterval"`

	// CPUManagerOptions are cpuManagerPolicyOptions, parsed and checked
	// against their gates; nil unless cpuManagerPolicy is static.
	CPUManagerOptions *cpumanager.Options `json:"cpuManagerOptions,omitempty"`
	// TopologyManagerOptions are topologyManagerPolicyOptions, parsed and
	// checked against their gates; nil with topologyManagerPolicy none.
	TopologyManagerOptions *topology.Options `json:"topologyManagerOptions,omitempty"`
}

// LegacyFlags are the settings of upstream's KubeletFlags without a
// KubeletConfiguration field.
type LegacyFlags struct {
	// CloudProvider is --cloud-provider: "" or CloudProviderExternal, the
	// only values upstream v1.37 has.
	CloudProvider string `json:"cloudProvider,omitempty"`
	// RuntimeCgroups is --runtime-cgroups: the runtime's cgroup (an
	// absolute cgroupfs name, "" unknown), whose stats are the "runtime"
	// system container's; as upstream v1.37 with a remote runtime, berth
	// does not move the runtime.
	RuntimeCgroups string `json:"runtimeCgroups,omitempty"`
	// AllocatableIgnoreEviction is --experimental-allocatable-ignore-eviction:
	// the hard eviction thresholds are not reserved from allocatable, and
	// the eviction manager has no allocatableMemory.available threshold
	// (AllocatableEvictionHard, EvictionEnforceNodeAllocatable).
	AllocatableIgnoreEviction bool `json:"allocatableIgnoreEviction,omitempty"`
	// MounterPath is --experimental-mounter-path: the mount binary nfs
	// volumes are mounted with ("" : mount from PATH), as upstream.
	MounterPath string `json:"mounterPath,omitempty"`
}

// Env is everything Load reads from outside the process. OSEnv returns the
// real one; tests inject their own. Load calls the functions from its own
// goroutine only.
type Env struct {
	ReadFile func(name string) ([]byte, error)
	ReadDir  func(name string) ([]fs.DirEntry, error)
	Stat     func(name string) (fs.FileInfo, error)
	Hostname func() (string, error)
}

// OSEnv returns an Env backed by the operating system.
func OSEnv() Env {
	return Env{ReadFile: os.ReadFile, ReadDir: os.ReadDir, Stat: os.Stat, Hostname: os.Hostname}
}

// Load builds a Config from flags, the way the upstream kubelet does:
//  1. decode --config strictly and apply the defaults;
//  2. merge the --config-dir drop-ins over it (RFC 7386 merge patch, files in
//     lexical order), then default again;
//  3. apply the flags that were given explicitly over the file;
//  4. validate everything, reporting every problem in one *ValidationError.
func Load(ctx context.Context, flags *Flags, env Env) (*Config, error) {
	logger := klog.FromContext(ctx)
	kc, origins, err := loadKubeletConfiguration(ctx, flags, env)
	if err != nil {
		return nil, err
	}
	setBy, flagProblems := applyFlags(kc, flags)
	src := sources{flags: setBy, files: origins}

	var problems problems
	problems.addAll(flagProblems)
	problems.addAll(src.name(validateKubelet(kc)))
	problems.addAll(src.name(validateGC(kc)))
	problems.addAll(src.name(validateCgroups(kc)))
	cpuOptions, cpuProblems := validateCPUManager(kc)
	problems.addAll(src.name(cpuProblems))
	topologyOptions, topologyProblems := validateTopologyManager(kc)
	problems.addAll(src.name(topologyProblems))
	problems.addAll(src.name(validateCluster(kc)))
	problems.addAll(src.name(validateServer(kc, flags.Kubeconfig != "", env)))
	problems.addAll(src.name(validateFeatureGates(logger, kc.FeatureGates)))
	problems.addAll(src.name(validateSettings(kc)))
	problems.addAll(src.name(validateMemoryManager(kc)))
	problems.addAll(src.name(validatePullRecords(kc)))
	problems.addAll(src.name(validateMemory(kc)))
	problems.addAll(src.name(validateLimits(kc)))
	problems.addAll(src.name(unsupportedFields(kc)))
	problems.addAll(src.name(validateShutdown(kc)))
	problems.addAll(src.name(validateNode(kc)))
	problems.addAll(validateLockFile(flags))
	for _, a := range acceptedSettings(kc, flags.fs) {
		logger.Info("Setting accepted but without effect", "setting", a[0], "reason", a[1])
	}

	cfg := &Config{
		Kubelet:                *kc,
		Kubeconfig:             flags.Kubeconfig,
		BootstrapKubeconfig:    flags.BootstrapKubeconfig,
		HostnameOverride:       flags.HostnameOverride,
		RootDir:                flags.RootDir,
		CertDir:                flags.CertDir,
		PodInfraContainerImage: flags.PodInfraContainerImage,
		LockFile:               flags.LockFile,
		ExitOnLockContention:   flags.ExitOnLockContention,
		Verbosity:              int(kc.Logging.Verbosity),
		CPUManagerOptions:      cpuOptions,
		TopologyManagerOptions: topologyOptions,
	}
	problems.addAll(applyNodeFlags(cfg, flags, env))
	cfg.ImageCredentialProviderConfig = flags.ImageCredentialProviderConfig
	cfg.ImageCredentialProviderBinDir = flags.ImageCredentialProviderBinDir
	var credProblems []problem
	cfg.CredentialProviders, cfg.CredentialProvidersHash, credProblems = credentialProviders(flags, env)
	problems.addAll(credProblems)
	var gcProblems []problem
	cfg.ContainerGC, gcProblems = containerGCPolicy(flags)
	problems.addAll(gcProblems)
	var hkProblem []problem
	cfg.HousekeepingInterval.Duration, hkProblem = housekeepingInterval(flags)
	problems.addAll(hkProblem)
	if err := problems.err(); err != nil {
		return nil, err
	}
	applyReservedCPUs(&cfg.Kubelet)
	logger.V(2).Info("Loaded configuration", "config", flags.ConfigFile, "configDir", flags.ConfigDir, "node", cfg.NodeName)
	return cfg, nil
}

// loadKubeletConfiguration performs steps 1 and 2 of Load. It also
// returns, for each top-level field a file set, the file that set it last
// (the --config file or a drop-in), for naming it in problems.
func loadKubeletConfiguration(ctx context.Context, flags *Flags, env Env) (*kubeletconfigv1beta1.KubeletConfiguration, map[string]string, error) {
	logger := klog.FromContext(ctx)
	base := legacyDefaults()
	origins := map[string]string{}
	if flags.ConfigFile != "" {
		obj, err := readConfigFile(env, flags.ConfigFile)
		if err != nil {
			return nil, nil, err
		}
		base = obj
		for k := range obj {
			origins[k] = fmt.Sprintf("--config %q", flags.ConfigFile)
		}
	}
	kc, err := fromObject(base)
	if err != nil {
		return nil, nil, err
	}
	SetDefaults(kc)
	if flags.ConfigDir == "" {
		return kc, origins, nil
	}
	// Upstream merges drop-ins over the already defaulted base. Encoding
	// drops empty values (omitempty), so the fields the file set are put
	// back as written: an explicit "evictionHard: {}" must stay non-default.
	merged, err := toObject(kc)
	if err != nil {
		return nil, nil, err
	}
	for k, v := range base {
		merged[k] = v
	}
	files, err := dropInFiles(env, flags.ConfigDir)
	if err != nil {
		return nil, nil, err
	}
	for _, f := range files {
		patch, err := readConfigFile(env, f)
		if err != nil {
			return nil, nil, err
		}
		logger.V(4).Info("Merging config drop-in", "file", f)
		merged = mergePatch(merged, patch).(map[string]any)
		for k := range patch {
			origins[k] = fmt.Sprintf("drop-in %q", f)
		}
	}
	if kc, err = fromObject(merged); err != nil {
		return nil, nil, err
	}
	SetDefaults(kc)
	return kc, origins, nil
}

// legacyDefaults are the values upstream's command line starts from when no
// --config file is given (its applyLegacyDefaults): anonymous access on,
// webhook authentication off, authorization AlwaysAllow. A --config file
// replaces them with the v1beta1 defaults (anonymous off, webhook on,
// Webhook authorization). (Upstream's legacy readOnlyPort 10255 is not
// applied: berth keeps the read-only port off unless it is configured.)
func legacyDefaults() map[string]any {
	return map[string]any{
		"authentication": map[string]any{
			"anonymous": map[string]any{"enabled": true},
			"webhook":   map[string]any{"enabled": false},
		},
		"authorization": map[string]any{"mode": "AlwaysAllow"},
	}
}

// applyNodeFlags parses and validates the flags that are not part of the
// KubeletConfiguration, and fills the matching Config fields.
func applyNodeFlags(cfg *Config, flags *Flags, env Env) []problem {
	var ps []problem
	flagProblem := func(name string, err error) {
		ps = append(ps, problem{key: "flag " + name, msg: fmt.Sprintf("flag --%s: %v", name, err)})
	}
	switch {
	case flags.BootstrapKubeconfig != "" && flags.Kubeconfig == "":
		flagProblem("bootstrap-kubeconfig", fmt.Errorf("needs --kubeconfig, the path the kubeconfig is written to after bootstrapping"))
	case flags.BootstrapKubeconfig != "":
		// --kubeconfig may be missing or stale: bootstrapping replaces it.
	case flags.Kubeconfig != "":
		if _, err := env.ReadFile(flags.Kubeconfig); err != nil {
			flagProblem("kubeconfig", fmt.Errorf("read %q: %w", flags.Kubeconfig, err))
		}
	}
	var err error
	if cfg.CloudProvider, err = cloudProvider(flags.unbound("cloud-provider")); err != nil {
		flagProblem("cloud-provider", err)
	}
	if cfg.RuntimeCgroups, err = runtimeCgroups(flags.unbound("runtime-cgroups")); err != nil {
		flagProblem("runtime-cgroups", err)
	}
	cfg.AllocatableIgnoreEviction = flags.unbound("experimental-allocatable-ignore-eviction") == "true"
	cfg.MounterPath = flags.unbound("experimental-mounter-path")
	if cfg.NodeIPs, err = parseNodeIPs(flags.NodeIP); err != nil {
		flagProblem("node-ip", err)
	}
	if cfg.NodeLabels, err = parseNodeLabels(labelItems(flags.NodeLabels)); err != nil {
		flagProblem("node-labels", err)
	}
	cfg.RegisterWithTaints = cfg.Kubelet.RegisterWithTaints
	for name, v := range map[string]string{"root-dir": flags.RootDir, "cert-dir": flags.CertDir, "pod-infra-container-image": flags.PodInfraContainerImage} {
		if strings.TrimSpace(v) == "" {
			flagProblem(name, fmt.Errorf("must not be empty"))
		}
	}
	switch p := flags.PLEGRelistPeriod; {
	case p > DefaultPLEGRelistPeriod:
		cfg.PLEGRelistPeriod = p
	case p != 0 && p < DefaultPLEGRelistPeriod: // zero: Flags built without NewFlags
		flagProblem("pleg-relist-period", fmt.Errorf("must be at least %v (upstream's period), got %v", DefaultPLEGRelistPeriod, p))
	}
	switch d := flags.DevicePluginDir; {
	case d == "": // Flags built without NewFlags
		cfg.DevicePluginDir = DefaultDevicePluginDir
	case !filepath.IsAbs(d):
		flagProblem("device-plugin-dir", fmt.Errorf("must be an absolute path, got %q", d))
	default:
		cfg.DevicePluginDir = filepath.Clean(d)
	}
	if cfg.NodeName, err = nodeName(flags.HostnameOverride, env.Hostname); err != nil {
		if flags.HostnameOverride != "" {
			flagProblem("hostname-override", err)
		} else {
			ps = append(ps, problem{key: "node name", msg: fmt.Sprintf("node name: %v (set --hostname-override)", err)})
		}
	}
	return ps
}

// CloudProviderExternal is the --cloud-provider value for an external
// cloud controller manager.
const CloudProviderExternal = "external"

// cloudProvider checks --cloud-provider as upstream v1.37 does: "" (none)
// or "external"; the built-in providers are gone.
func cloudProvider(name string) (string, error) {
	if name != "" && name != CloudProviderExternal {
		return "", fmt.Errorf("cloud provider %q was specified, but built-in cloud providers are disabled. Please set --cloud-provider=external and migrate to an external cloud provider", name)
	}
	return name, nil
}

// runtimeCgroups checks --runtime-cgroups: upstream's help asks for an
// absolute cgroup name ("/system.slice/containerd.service").
func runtimeCgroups(name string) (string, error) {
	if name != "" && !strings.HasPrefix(name, "/") {
		return "", fmt.Errorf("%q is not an absolute cgroup name", name)
	}
	return name, nil
}

// AllocatableEvictionHard returns the hard eviction thresholds reserved
// from the node's allocatable: evictionHard, or none with
// --experimental-allocatable-ignore-eviction, as upstream's server.go.
func (c *Config) AllocatableEvictionHard() map[string]string {
	if c.AllocatableIgnoreEviction {
		return nil
	}
	return c.Kubelet.EvictionHard
}

// EvictionEnforceNodeAllocatable returns the enforceNodeAllocatable the
// eviction manager derives its allocatableMemory.available threshold from:
// none with --experimental-allocatable-ignore-eviction, as upstream's
// kubelet.go.
func (c *Config) EvictionEnforceNodeAllocatable() []string {
	if c.AllocatableIgnoreEviction {
		return nil
	}
	return c.Kubelet.EnforceNodeAllocatable
}

// ExternalCloudProvider says whether a cloud controller manager
// initializes the Node (--cloud-provider=external).
func (c *Config) ExternalCloudProvider() bool { return c.CloudProvider == CloudProviderExternal }

// nodeName returns the node name as upstream derives it: the override if
// given, else the host name, trimmed and lower-cased. It must be a DNS
// subdomain, since static pod mirror names are built from it.
func nodeName(override string, hostname func() (string, error)) (string, error) {
	name := override
	if name == "" {
		h, err := hostname()
		if err != nil {
			return "", fmt.Errorf("get hostname: %w", err)
		}
		name = h
	}
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "" {
		return "", fmt.Errorf("empty node name is invalid")
	}
	if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
		return "", fmt.Errorf("node name %q is invalid: %s", name, strings.Join(msgs, ", "))
	}
	return name, nil
}

// labelItems returns --node-labels as sorted key=value items.
func labelItems(labels map[string]string) []string {
	items := make([]string, 0, len(labels))
	for k, v := range labels {
		items = append(items, k+"="+v)
	}
	sort.Strings(items)
	return items
}
