package config

import (
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	cliflag "k8s.io/component-base/cli/flag"
	logsapi "k8s.io/component-base/logs/api/v1"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// configFlag is one upstream flag that sets a KubeletConfiguration field.
type configFlag struct {
	Name string
	// Field is the JSON path of the field the flag sets ("maxPods",
	// "authentication.webhook.cacheTTL").
	Field string
}

// configFlags lists every flag of upstream's AddKubeletConfigFlags, in its
// order, with the field it sets. TestFlagTableMatchesUpstream pins it to
// upstream's options.go; bindConfigFlags registers the same names.
func configFlags() []configFlag {
	return []configFlag{
		{"enable-server", "enableServer"},
		{"fail-swap-on", "failSwapOn"},
		{"pod-manifest-path", "staticPodPath"},
		{"sync-frequency", "syncFrequency"},
		{"file-check-frequency", "fileCheckFrequency"},
		{"http-check-frequency", "httpCheckFrequency"},
		{"manifest-url", "staticPodURL"},
		{"manifest-url-header", "staticPodURLHeader"},
		{"address", "address"},
		{"port", "port"},
		{"read-only-port", "readOnlyPort"},
		{"fail-cgroupv1", "failCgroupV1"},
		{"container-runtime-endpoint", "containerRuntimeEndpoint"},
		{"image-service-endpoint", "imageServiceEndpoint"},
		{"anonymous-auth", "authentication.anonymous.enabled"},
		{"authentication-token-webhook", "authentication.webhook.enabled"},
		{"authentication-token-webhook-cache-ttl", "authentication.webhook.cacheTTL"},
		{"client-ca-file", "authentication.x509.clientCAFile"},
		{"authorization-mode", "authorization.mode"},
		{"authorization-webhook-cache-authorized-ttl", "authorization.webhook.cacheAuthorizedTTL"},
		{"authorization-webhook-cache-unauthorized-ttl", "authorization.webhook.cacheUnauthorizedTTL"},
		{"tls-cert-file", "tlsCertFile"},
		{"tls-private-key-file", "tlsPrivateKeyFile"},
		{"rotate-server-certificates", "serverTLSBootstrap"},
		{"tls-cipher-suites", "tlsCipherSuites"},
		{"tls-min-version", "tlsMinVersion"},
		{"rotate-certificates", "rotateCertificates"},
		{"registry-qps", "registryPullQPS"},
		{"registry-burst", "registryBurst"},
		{"event-qps", "eventRecordQPS"},
		{"event-burst", "eventBurst"},
		{"enable-debugging-handlers", "enableDebuggingHandlers"},
		{"contention-profiling", "enableContentionProfiling"},
		{"healthz-port", "healthzPort"},
		{"healthz-bind-address", "healthzBindAddress"},
		{"oom-score-adj", "oomScoreAdj"},
		{"cluster-domain", "clusterDomain"},
		{"volume-plugin-dir", "volumePluginDir"},
		{"cluster-dns", "clusterDNS"},
		{"streaming-connection-idle-timeout", "streamingConnectionIdleTimeout"},
		{"node-status-update-frequency", "nodeStatusUpdateFrequency"},
		{"minimum-image-ttl-duration", "imageMinimumGCAge"},
		{"image-gc-high-threshold", "imageGCHighThresholdPercent"},
		{"image-gc-low-threshold", "imageGCLowThresholdPercent"},
		{"volume-stats-agg-period", "volumeStatsAggPeriod"},
		{"feature-gates", "featureGates"},
		{"kubelet-cgroups", "kubeletCgroups"},
		{"system-cgroups", "systemCgroups"},
		{"provider-id", "providerID"},
		{"cgroups-per-qos", "cgroupsPerQOS"},
		{"cgroup-driver", "cgroupDriver"},
		{"cgroup-root", "cgroupRoot"},
		{"cpu-manager-policy", "cpuManagerPolicy"},
		{"cpu-manager-policy-options", "cpuManagerPolicyOptions"},
		{"cpu-manager-reconcile-period", "cpuManagerReconcilePeriod"},
		{"qos-reserved", "qosReserved"},
		{"topology-manager-policy", "topologyManagerPolicy"},
		{"runtime-request-timeout", "runtimeRequestTimeout"},
		{"hairpin-mode", "hairpinMode"},
		{"max-pods", "maxPods"},
		{"pod-cidr", "podCIDR"},
		{"pod-max-pids", "podPidsLimit"},
		{"resolv-conf", "resolvConf"},
		{"runonce", "runOnce"},
		{"cpu-cfs-quota", "cpuCFSQuota"},
		{"cpu-cfs-quota-period", "cpuCFSQuotaPeriod"},
		{"enable-controller-attach-detach", "enableControllerAttachDetach"},
		{"make-iptables-util-chains", "makeIPTablesUtilChains"},
		{"container-log-max-size", "containerLogMaxSize"},
		{"container-log-max-files", "containerLogMaxFiles"},
		{"allowed-unsafe-sysctls", "allowedUnsafeSysctls"},
		{"node-status-max-images", "nodeStatusMaxImages"},
		{"kernel-memcg-notification", "kernelMemcgNotification"},
		{"local-storage-capacity-isolation", "localStorageCapacityIsolation"},
		{"max-open-files", "maxOpenFiles"},
		{"kube-api-content-type", "contentType"},
		{"kube-api-qps", "kubeAPIQPS"},
		{"kube-api-burst", "kubeAPIBurst"},
		{"serialize-image-pulls", "serializeImagePulls"},
		{"eviction-hard", "evictionHard"},
		{"eviction-soft", "evictionSoft"},
		{"eviction-soft-grace-period", "evictionSoftGracePeriod"},
		{"eviction-pressure-transition-period", "evictionPressureTransitionPeriod"},
		{"eviction-max-pod-grace-period", "evictionMaxPodGracePeriod"},
		{"eviction-minimum-reclaim", "evictionMinimumReclaim"},
		{"pods-per-core", "podsPerCore"},
		{"protect-kernel-defaults", "protectKernelDefaults"},
		{"reserved-cpus", "reservedSystemCPUs"},
		{"topology-manager-scope", "topologyManagerScope"},
		{"topology-manager-policy-options", "topologyManagerPolicyOptions"},
		{"system-reserved", "systemReserved"},
		{"kube-reserved", "kubeReserved"},
		{"enforce-node-allocatable", "enforceNodeAllocatable"},
		{"system-reserved-cgroup", "systemReservedCgroup"},
		{"kube-reserved-cgroup", "kubeReservedCgroup"},
		{"memory-manager-policy", "memoryManagerPolicy"},
		{"reserved-memory", "reservedMemory"},
		// logsapi.AddFlags (component-base), called by AddKubeletConfigFlags.
		{"logging-format", "logging.format"},
		{"log-flush-frequency", "logging.flushFrequency"},
		{"v", "logging.verbosity"},
		{"vmodule", "logging.vmodule"},
		{"log-text-split-stream", "logging.options.text.splitStream"},
		{"log-text-info-buffer-size", "logging.options.text.infoBufferSize"},
		{"log-json-split-stream", "logging.options.json.splitStream"},
		{"log-json-info-buffer-size", "logging.options.json.infoBufferSize"},
		{"register-node", "registerNode"},
		{"register-with-taints", "registerWithTaints"},
	}
}

// notDeprecatedFlags are the config flags upstream does not mark deprecated
// (the notDeprecated set of its AddKubeletConfigFlags).
func notDeprecatedFlags() map[string]bool {
	return map[string]bool{"v": true, "vmodule": true, "log-flush-frequency": true, "provider-id": true, "fail-cgroupv1": true}
}

// deprecatedConfigFlag is upstream's deprecation notice of config flags.
const deprecatedConfigFlag = "This parameter should be set via the config file specified by the Kubelet's --config flag. See https://kubernetes.io/docs/tasks/administer-cluster/kubelet-config-file/ for more information."

// newPtr makes *p point to a zero value if it is nil and returns it, so
// that a flag can be bound to a pointer field the defaults leave unset.
func newPtr[T any](p **T) *T {
	if *p == nil {
		*p = new(T)
	}
	return *p
}

// boolPtrVar and its siblings bind a flag to a pointer field, its default
// the value pointed to (zero when the pointer was nil).
func boolPtrVar(fs *pflag.FlagSet, pp **bool, name string) {
	p := newPtr(pp)
	fs.BoolVar(p, name, *p, "")
}

func int32PtrVar(fs *pflag.FlagSet, pp **int32, name string) {
	p := newPtr(pp)
	fs.Int32Var(p, name, *p, "")
}

func int64PtrVar(fs *pflag.FlagSet, pp **int64, name string) {
	p := newPtr(pp)
	fs.Int64Var(p, name, *p, "")
}

func stringPtrVar(fs *pflag.FlagSet, pp **string, name string) {
	p := newPtr(pp)
	fs.StringVar(p, name, *p, "")
}

// bindConfigFlags registers every flag of configFlags into fs, bound to the
// fields of c (which holds the defaults the help shows), with upstream's
// types. Usage strings are set afterwards from the support table.
func bindConfigFlags(fs *pflag.FlagSet, c *kubeletconfigv1beta1.KubeletConfiguration) {
	bindServerFlags(fs, c)
	bindNodeFlags(fs, c)
	bindResourceFlags(fs, c)
	logsapi.AddFlags(&c.Logging, fs)
	// Upstream has the JSON log format registered, which adds these two;
	// berth does not link it, so it registers them itself.
	if fs.Lookup("log-json-split-stream") == nil {
		fs.BoolVar(&c.Logging.Options.JSON.SplitStream, "log-json-split-stream", false, "")
		fs.Var(&c.Logging.Options.JSON.InfoBufferSize, "log-json-info-buffer-size", "")
	}
	boolPtrVar(fs, &c.RegisterNode, "register-node")
	fs.Var(&taintsValue{taints: &c.RegisterWithTaints}, "register-with-taints", "")
}

func bindServerFlags(fs *pflag.FlagSet, c *kubeletconfigv1beta1.KubeletConfiguration) {
	boolPtrVar(fs, &c.EnableServer, "enable-server")
	boolPtrVar(fs, &c.FailSwapOn, "fail-swap-on")
	fs.StringVar(&c.StaticPodPath, "pod-manifest-path", c.StaticPodPath, "")
	fs.DurationVar(&c.SyncFrequency.Duration, "sync-frequency", c.SyncFrequency.Duration, "")
	fs.DurationVar(&c.FileCheckFrequency.Duration, "file-check-frequency", c.FileCheckFrequency.Duration, "")
	fs.DurationVar(&c.HTTPCheckFrequency.Duration, "http-check-frequency", c.HTTPCheckFrequency.Duration, "")
	fs.StringVar(&c.StaticPodURL, "manifest-url", c.StaticPodURL, "")
	fs.Var(cliflag.NewColonSeparatedMultimapStringString(&c.StaticPodURLHeader), "manifest-url-header", "")
	fs.Var(&ipValue{ip: &c.Address}, "address", "")
	fs.Int32Var(&c.Port, "port", c.Port, "")
	fs.Int32Var(&c.ReadOnlyPort, "read-only-port", c.ReadOnlyPort, "")
	boolPtrVar(fs, &c.FailCgroupV1, "fail-cgroupv1")
	fs.StringVar(&c.ContainerRuntimeEndpoint, "container-runtime-endpoint", c.ContainerRuntimeEndpoint, "")
	fs.StringVar(&c.ImageServiceEndpoint, "image-service-endpoint", c.ImageServiceEndpoint, "")
	boolPtrVar(fs, &c.Authentication.Anonymous.Enabled, "anonymous-auth")
	boolPtrVar(fs, &c.Authentication.Webhook.Enabled, "authentication-token-webhook")
	fs.DurationVar(&c.Authentication.Webhook.CacheTTL.Duration, "authentication-token-webhook-cache-ttl", c.Authentication.Webhook.CacheTTL.Duration, "")
	fs.StringVar(&c.Authentication.X509.ClientCAFile, "client-ca-file", c.Authentication.X509.ClientCAFile, "")
	fs.StringVar((*string)(&c.Authorization.Mode), "authorization-mode", string(c.Authorization.Mode), "")
	fs.DurationVar(&c.Authorization.Webhook.CacheAuthorizedTTL.Duration, "authorization-webhook-cache-authorized-ttl", c.Authorization.Webhook.CacheAuthorizedTTL.Duration, "")
	fs.DurationVar(&c.Authorization.Webhook.CacheUnauthorizedTTL.Duration, "authorization-webhook-cache-unauthorized-ttl", c.Authorization.Webhook.CacheUnauthorizedTTL.Duration, "")
	fs.StringVar(&c.TLSCertFile, "tls-cert-file", c.TLSCertFile, "")
	fs.StringVar(&c.TLSPrivateKeyFile, "tls-private-key-file", c.TLSPrivateKeyFile, "")
	fs.BoolVar(&c.ServerTLSBootstrap, "rotate-server-certificates", c.ServerTLSBootstrap, "")
	fs.StringSliceVar(&c.TLSCipherSuites, "tls-cipher-suites", c.TLSCipherSuites, "")
	fs.StringVar(&c.TLSMinVersion, "tls-min-version", c.TLSMinVersion, "")
	fs.BoolVar(&c.RotateCertificates, "rotate-certificates", c.RotateCertificates, "")
	int32PtrVar(fs, &c.RegistryPullQPS, "registry-qps")
	fs.Int32Var(&c.RegistryBurst, "registry-burst", c.RegistryBurst, "")
	int32PtrVar(fs, &c.EventRecordQPS, "event-qps")
	fs.Int32Var(&c.EventBurst, "event-burst", c.EventBurst, "")
	boolPtrVar(fs, &c.EnableDebuggingHandlers, "enable-debugging-handlers")
	fs.BoolVar(&c.EnableContentionProfiling, "contention-profiling", c.EnableContentionProfiling, "")
	int32PtrVar(fs, &c.HealthzPort, "healthz-port")
	fs.Var(&ipValue{ip: &c.HealthzBindAddress}, "healthz-bind-address", "")
	int32PtrVar(fs, &c.OOMScoreAdj, "oom-score-adj")
	fs.StringVar(&c.ClusterDomain, "cluster-domain", c.ClusterDomain, "")
	fs.StringVar(&c.VolumePluginDir, "volume-plugin-dir", c.VolumePluginDir, "")
	fs.StringSliceVar(&c.ClusterDNS, "cluster-dns", c.ClusterDNS, "")
	fs.DurationVar(&c.StreamingConnectionIdleTimeout.Duration, "streaming-connection-idle-timeout", c.StreamingConnectionIdleTimeout.Duration, "")
	fs.DurationVar(&c.NodeStatusUpdateFrequency.Duration, "node-status-update-frequency", c.NodeStatusUpdateFrequency.Duration, "")
}

func bindNodeFlags(fs *pflag.FlagSet, c *kubeletconfigv1beta1.KubeletConfiguration) {
	fs.DurationVar(&c.ImageMinimumGCAge.Duration, "minimum-image-ttl-duration", c.ImageMinimumGCAge.Duration, "")
	int32PtrVar(fs, &c.ImageGCHighThresholdPercent, "image-gc-high-threshold")
	int32PtrVar(fs, &c.ImageGCLowThresholdPercent, "image-gc-low-threshold")
	fs.DurationVar(&c.VolumeStatsAggPeriod.Duration, "volume-stats-agg-period", c.VolumeStatsAggPeriod.Duration, "")
	fs.Var(cliflag.NewMapStringBool(&c.FeatureGates), "feature-gates", "")
	fs.StringVar(&c.KubeletCgroups, "kubelet-cgroups", c.KubeletCgroups, "")
	fs.StringVar(&c.SystemCgroups, "system-cgroups", c.SystemCgroups, "")
	fs.StringVar(&c.ProviderID, "provider-id", c.ProviderID, "")
	boolPtrVar(fs, &c.CgroupsPerQOS, "cgroups-per-qos")
	fs.StringVar(&c.CgroupDriver, "cgroup-driver", c.CgroupDriver, "")
	fs.StringVar(&c.CgroupRoot, "cgroup-root", c.CgroupRoot, "")
	fs.StringVar(&c.CPUManagerPolicy, "cpu-manager-policy", c.CPUManagerPolicy, "")
	fs.Var(cliflag.NewMapStringStringNoSplit(&c.CPUManagerPolicyOptions), "cpu-manager-policy-options", "")
	fs.DurationVar(&c.CPUManagerReconcilePeriod.Duration, "cpu-manager-reconcile-period", c.CPUManagerReconcilePeriod.Duration, "")
	fs.Var(cliflag.NewMapStringString(&c.QOSReserved), "qos-reserved", "")
	fs.StringVar(&c.TopologyManagerPolicy, "topology-manager-policy", c.TopologyManagerPolicy, "")
	fs.DurationVar(&c.RuntimeRequestTimeout.Duration, "runtime-request-timeout", c.RuntimeRequestTimeout.Duration, "")
	fs.StringVar(&c.HairpinMode, "hairpin-mode", c.HairpinMode, "")
	fs.Int32Var(&c.MaxPods, "max-pods", c.MaxPods, "")
	fs.StringVar(&c.PodCIDR, "pod-cidr", c.PodCIDR, "")
	int64PtrVar(fs, &c.PodPidsLimit, "pod-max-pids")
	stringPtrVar(fs, &c.ResolverConfig, "resolv-conf")
	fs.BoolVar(&c.RunOnce, "runonce", c.RunOnce, "")
	boolPtrVar(fs, &c.CPUCFSQuota, "cpu-cfs-quota")
	period := newPtr(&c.CPUCFSQuotaPeriod)
	fs.DurationVar(&period.Duration, "cpu-cfs-quota-period", period.Duration, "")
	boolPtrVar(fs, &c.EnableControllerAttachDetach, "enable-controller-attach-detach")
	boolPtrVar(fs, &c.MakeIPTablesUtilChains, "make-iptables-util-chains")
	fs.StringVar(&c.ContainerLogMaxSize, "container-log-max-size", c.ContainerLogMaxSize, "")
	int32PtrVar(fs, &c.ContainerLogMaxFiles, "container-log-max-files")
	fs.StringSliceVar(&c.AllowedUnsafeSysctls, "allowed-unsafe-sysctls", c.AllowedUnsafeSysctls, "")
	int32PtrVar(fs, &c.NodeStatusMaxImages, "node-status-max-images")
	fs.BoolVar(&c.KernelMemcgNotification, "kernel-memcg-notification", c.KernelMemcgNotification, "")
	boolPtrVar(fs, &c.LocalStorageCapacityIsolation, "local-storage-capacity-isolation")
	fs.Int64Var(&c.MaxOpenFiles, "max-open-files", c.MaxOpenFiles, "")
	fs.StringVar(&c.ContentType, "kube-api-content-type", c.ContentType, "")
	int32PtrVar(fs, &c.KubeAPIQPS, "kube-api-qps")
	fs.Int32Var(&c.KubeAPIBurst, "kube-api-burst", c.KubeAPIBurst, "")
	boolPtrVar(fs, &c.SerializeImagePulls, "serialize-image-pulls")
}

func bindResourceFlags(fs *pflag.FlagSet, c *kubeletconfigv1beta1.KubeletConfiguration) {
	fs.Var(cliflag.NewLangleSeparatedMapStringString(&c.EvictionHard), "eviction-hard", "")
	fs.Var(cliflag.NewLangleSeparatedMapStringString(&c.EvictionSoft), "eviction-soft", "")
	fs.Var(cliflag.NewMapStringString(&c.EvictionSoftGracePeriod), "eviction-soft-grace-period", "")
	fs.DurationVar(&c.EvictionPressureTransitionPeriod.Duration, "eviction-pressure-transition-period", c.EvictionPressureTransitionPeriod.Duration, "")
	fs.Int32Var(&c.EvictionMaxPodGracePeriod, "eviction-max-pod-grace-period", c.EvictionMaxPodGracePeriod, "")
	fs.Var(cliflag.NewMapStringString(&c.EvictionMinimumReclaim), "eviction-minimum-reclaim", "")
	fs.Int32Var(&c.PodsPerCore, "pods-per-core", c.PodsPerCore, "")
	fs.BoolVar(&c.ProtectKernelDefaults, "protect-kernel-defaults", c.ProtectKernelDefaults, "")
	fs.StringVar(&c.ReservedSystemCPUs, "reserved-cpus", c.ReservedSystemCPUs, "")
	fs.StringVar(&c.TopologyManagerScope, "topology-manager-scope", c.TopologyManagerScope, "")
	fs.Var(cliflag.NewMapStringString(&c.TopologyManagerPolicyOptions), "topology-manager-policy-options", "")
	fs.Var(cliflag.NewMapStringString(&c.SystemReserved), "system-reserved", "")
	fs.Var(cliflag.NewMapStringString(&c.KubeReserved), "kube-reserved", "")
	fs.StringSliceVar(&c.EnforceNodeAllocatable, "enforce-node-allocatable", c.EnforceNodeAllocatable, "")
	fs.StringVar(&c.SystemReservedCgroup, "system-reserved-cgroup", c.SystemReservedCgroup, "")
	fs.StringVar(&c.KubeReservedCgroup, "kube-reserved-cgroup", c.KubeReservedCgroup, "")
	fs.StringVar(&c.MemoryManagerPolicy, "memory-manager-policy", c.MemoryManagerPolicy, "")
	fs.Var(&reservedMemoryValue{value: &c.ReservedMemory}, "reserved-memory", "")
}

// taintsValue is --register-with-taints: comma-separated
// key[=value]:Effect items, as upstream's RegisterWithTaintsVar.
type taintsValue struct {
	taints *[]corev1.Taint
}

func (v *taintsValue) String() string {
	if v.taints == nil {
		return ""
	}
	var items []string
	for _, t := range *v.taints {
		items = append(items, t.ToString())
	}
	return joinComma(items)
}

func (v *taintsValue) Set(s string) error {
	var items []string
	if s != "" {
		items = splitComma(s)
	}
	taints, err := parseTaints(items)
	if err != nil {
		return err
	}
	*v.taints = taints
	return nil
}

func (v *taintsValue) Type() string { return "[]v1.Taint" }
