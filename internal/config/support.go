package config

import "strings"

// Support says what berth does with one KubeletConfiguration field or flag.
type Support int

const (
	// Honoured means every valid value takes effect.
	Honoured Support = iota
	// DefaultMatches means only the upstream default is accepted, and that
	// default is what berth does.
	DefaultMatches
	// NotImplemented means only the upstream default is accepted, and berth
	// does not implement the behaviour the default describes yet.
	NotImplemented
	// ClusterOnly is for flags: accepted and validated, used in cluster mode.
	ClusterOnly
	// Rejected is for flags that are an error whenever they are set.
	Rejected
	// Accepted means every valid value is accepted although it has no
	// effect: it configures only a feature that berth refuses wherever a
	// pod asks for it (the reason says which, and how). Load logs a notice
	// when such a setting differs from its default, so it is never
	// silently ignored.
	Accepted
)

// String returns the wording used in docs/config-compat.md.
func (s Support) String() string {
	switch s {
	case Honoured:
		return "honoured"
	case DefaultMatches:
		return "default only (matches berth)"
	case NotImplemented:
		return "default only (not implemented yet)"
	case ClusterOnly:
		return "validated, used in cluster mode"
	case Rejected:
		return "rejected"
	case Accepted:
		return "accepted, no effect"
	}
	return "unknown"
}

// FieldSupport is one row of the compatibility table: a plain value.
type FieldSupport struct {
	// Name is the JSON name of a top-level KubeletConfiguration field, or a
	// flag name with its dashes ("--root-dir").
	Name    string
	Support Support
	Reason  string
}

// kubeletFieldSupport lists every top-level KubeletConfiguration field, in
// the order of the upstream type. A test fails if a field is missing, so a
// new upstream field can never be accepted silently. Only Honoured fields may
// take non-default values.
func kubeletFieldSupport() []FieldSupport {
	return []FieldSupport{
		{"enableServer", Honoured, "false means berth serves nothing on the kubelet API port"},
		{"staticPodPath", Honoured, "the file pod source"},
		{"podLogsDir", Honoured, "the root of the pods' container log directories (runtime log paths, /containerLogs, log rotation, orphan removal, stats); absolute, normalized and ASCII, as upstream; berth also refuses \"/\""},
		{"syncFrequency", Honoured, "the periodic pod resync"},
		{"fileCheckFrequency", Honoured, "the file pod source re-reads the path at this period"},
		{"httpCheckFrequency", Honoured, "the HTTP pod source polls at this period"},
		{"staticPodURL", Honoured, "the HTTP pod source"},
		{"staticPodURLHeader", Honoured, "headers sent by the HTTP pod source"},
		{"address", Honoured, "bind address of the kubelet API and read-only ports"},
		{"port", Honoured, "the kubelet API port (TLS), advertised in the Node's daemonEndpoints"},
		{"readOnlyPort", Honoured, "0 (the default) disables the read-only server; a port is validated"},
		{"tlsCertFile", Honoured, "the serving certificate, reloaded when the files change; unset (and no serverTLSBootstrap), a self-signed kubelet.crt is generated in --cert-dir and reused"},
		{"tlsPrivateKeyFile", Honoured, "the serving key (set together with tlsCertFile), reloaded with it"},
		{"tlsCipherSuites", Honoured, "upstream names (TLS_ECDHE_...); unknown names are an error"},
		{"tlsCurvePreferences", Honoured, "numeric crypto/tls CurveIDs this Go knows (unset: Go's defaults)"},
		{"tlsMinVersion", Honoured, "VersionTLS10 to VersionTLS13 (unset: TLS 1.2)"},
		{"rotateCertificates", Honoured, "the client certificate is renewed through a CSR at 70-90% of its life (client-go's certificate manager) and every API client switches to it, closing the old connections"},
		{"serverTLSBootstrap", Honoured, "the serving certificate comes from a kubernetes.io/kubelet-serving CSR (SANs: the node's addresses) and is rotated; the kubelet API serves no handshake until it is issued; needs --kubeconfig"},
		{"authentication", Honoured, "x509 client CAs (the file reloaded when it changes), TokenReview webhook with its cache TTL, anonymous; the webhook needs --kubeconfig, as upstream"},
		{"authorization", Honoured, "AlwaysAllow, or Webhook (SubjectAccessReview, cached); Webhook needs --kubeconfig, as upstream"},
		{"registryPullQPS", Honoured, "a token bucket (client-go flowcontrol) of image pulls per second, 0 for none; a pull finding it empty fails at once with \"pull QPS exceeded\" (ErrImagePull), as upstream"},
		{"registryBurst", Honoured, "the burst of the registryPullQPS token bucket, as upstream"},
		{"imagePullCredentialsVerificationPolicy", Honoured, "with KubeletEnsureSecretPulledImages (on by default): a present image is used without a pull only by pods the policy exempts or that present the credentials it was pulled with (upstream's records in <root-dir>/image_manager)"},
		{"preloadedImagesVerificationAllowlist", Honoured, "with imagePullCredentialsVerificationPolicy NeverVerifyAllowlistedImages: images whose pods are never asked for credentials, validated as upstream"},
		{"eventRecordQPS", Honoured, "events sent to the API server per second (0: unlimited)"},
		{"eventBurst", Honoured, "burst of events sent to the API server"},
		{"enableDebuggingHandlers", Honoured, "false answers 405 on exec, attach, portForward, run, containerLogs, runningpods, logs, pprof and /debug/eviction (the eviction explainer), and drops configz"},
		{"enableContentionProfiling", Honoured, "true sets the block profile rate to 1 at start when /debug/pprof/ is served (enableServer, enableDebuggingHandlers, enableProfilingHandler), as upstream"},
		{"healthzPort", Honoured, "the healthz server port (0 disables it)"},
		{"healthzBindAddress", Honoured, "the healthz server bind address"},
		{"oomScoreAdj", Honoured, "written to berth's own /proc/self/oom_score_adj; where the kernel refuses (no CAP_SYS_RESOURCE for a negative value), berth warns once and runs on"},
		{"clusterDomain", Honoured, "the pods' DNS search path and subdomain FQDNs; a DNS subdomain"},
		{"clusterDNS", Honoured, "nameserver IPs of ClusterFirst pods; empty makes them fall back to resolvConf"},
		{"streamingConnectionIdleTimeout", Honoured, "exec, attach and port-forward streams idle this long are closed"},
		{"nodeStatusUpdateFrequency", Honoured, "how often node status is computed (and written when it changed)"},
		{"nodeStatusReportFrequency", Honoured, "how often node status is written when it did not change"},
		{"nodeLeaseDurationSeconds", Honoured, "the node Lease duration; renewed every quarter of it"},
		{"imageMinimumGCAge", Honoured, "an image detected more recently is not removed for disk space"},
		{"imageMaximumGCAge", Honoured, "an image unused for longer is removed (0: never), once berth has run that long"},
		{"imageGCHighThresholdPercent", Honoured, "image GC starts at this image filesystem usage (100 with imageMaximumGCAge 0: off)"},
		{"imageGCLowThresholdPercent", Honoured, "image GC frees down to this usage"},
		{"volumeStatsAggPeriod", Honoured, "how often pod volumes are measured for /stats/summary; zero or less turns volume stats off, as upstream"},
		{"kubeletCgroups", Honoured, "berth moves itself into this cgroupfs cgroup at start, made when missing; empty: it stays where it was started"},
		{"systemCgroups", Honoured, "with cgroupRoot set, berth moves the processes of the root cgroup (but init and kernel threads) into this cgroupfs cgroup at start and every minute, as upstream; reported as the \"misc\" system container of /stats/summary"},
		{"cgroupRoot", Honoured, "the existing cgroup kubepods is created under (empty: /), with cgroupsPerQOS"},
		{"cgroupsPerQOS", Honoured, "true: pods run in kubepods/{burstable,besteffort}/pod<uid> with upstream's QoS settings; false: in the runtime's default cgroups"},
		{"cgroupDriver", Honoured, "used when the runtime does not report its cgroup driver (the runtime wins, as upstream)"},
		{"cpuManagerPolicy", Honoured, "none or static (internal/node/cpumanager): Guaranteed pods' containers with integer CPU requests get CPUs of their own, the others the shared pool; state in <root-dir>/cpu_manager_state in upstream's format, a checkpoint of another policy refuses the start"},
		{"singleProcessOOMKill", Honoured, "on cgroup v2, unless true, containers and sandboxes get memory.oom.group=1; false is refused at start on cgroup v1"},
		{"cpuManagerPolicyOptions", Honoured, "full-pcpus-only, strict-cpu-reservation, distribute-cpus-across-cores (CPUManagerPolicyAlphaOptions); distribute-cpus-across-numa, align-by-socket and prefer-align-cpus-by-uncorecache are refused (not implemented yet)"},
		{"cpuManagerReconcilePeriod", Honoured, "the static policy's reconcile loop: running containers' cpusets set through UpdateContainerResources"},
		{"memoryManagerPolicy", Honoured, "None or Static (internal/node/memorymanager): with Static, the containers of Guaranteed pods get their memory and huge pages on the smallest set of NUMA nodes that holds them (cpuset.mems), a pod that does not fit is refused, init containers' memory is reused; state in <root-dir>/memory_manager_state in upstream's format, a checkpoint of another policy or one the machine no longer matches refuses the start; BestEffort is refused as upstream refuses it on Linux"},
		{"topologyManagerPolicy", Honoured, "none, best-effort, restricted or single-numa-node (internal/node/topology): the CPU manager's NUMA hints merged as upstream's policies; a pod restricted or single-numa-node cannot align is refused (TopologyAffinityError) and its exclusive CPUs are taken from the merged NUMA nodes first; the memory manager is not a hint provider yet"},
		{"topologyManagerScope", Honoured, "container (each container's hints merged and allocated in turn) or pod (the pod's hints merged once for all its containers)"},
		{"topologyManagerPolicyOptions", Honoured, "prefer-closest-numa-nodes (NUMA distances from sysfs), max-allowable-numa-nodes (a host with more NUMA nodes refuses the start); parsed only with a policy other than none, as upstream"},
		{"qosReserved", Honoured, "memory: N% (validated as upstream); with the QOSReserved gate, the burstable and besteffort QoS cgroups' memory limits keep N% of the Guaranteed (and Burstable) pods' memory requests for them, as upstream; without the gate no effect"},
		{"runtimeRequestTimeout", Honoured, "the timeout of every CRI call"},
		{"hairpinMode", Honoured, "promiscuous-bridge, hairpin-veth or none, validated as upstream; as upstream's kubelet with a CRI runtime, berth passes it nowhere (hairpin traffic is the CNI plugin's)"},
		{"maxPods", Honoured, "the node's pods capacity; pods beyond it fail admission with OutOfpods"},
		{"podCIDR", Honoured, "handed to the runtime (CRI UpdateRuntimeConfig) at start; in cluster mode the Node's spec.podCIDRs then replace it, as upstream"},
		{"podPidsLimit", Honoured, "pids.max of every pod cgroup when positive (with cgroupsPerQOS)"},
		{"resolvConf", Honoured, "the host resolver file given to pods with dnsPolicy Default"},
		{"runOnce", Honoured, "as upstream v1.37, which has no run-once mode any more: true (or --runonce) is refused with upstream's message"},
		{"cpuCFSQuota", Honoured, "false sets no CFS quota (nor period) on containers and sandboxes and an unlimited quota on pod cgroups"},
		{"cpuCFSQuotaPeriod", Honoured, "the CFS period of container, sandbox and pod cgroup quotas (1ms to 1s; CustomCPUCFSQuotaPeriod is always on)"},
		{"nodeStatusMaxImages", Honoured, "how many images node status lists (-1: all)"},
		{"maxOpenFiles", Honoured, "berth sets its own RLIMIT_NOFILE (soft and hard) to it at start; a failure is logged, as upstream"},
		{"contentType", Honoured, "the content type of API requests"},
		{"kubeAPIQPS", Honoured, "API requests per second (pods, status)"},
		{"kubeAPIBurst", Honoured, "burst of API requests"},
		{"serializeImagePulls", Honoured, "true: one image pull at a time across all pods; false: parallel pulls, bounded by maxParallelImagePulls"},
		{"maxParallelImagePulls", Honoured, "with serializeImagePulls false, at most this many pulls at once (unset: no bound); more than 1 needs serializeImagePulls false, as upstream"},
		{"evictionHard", Honoured, "hard eviction thresholds of the eviction manager (internal/node/eviction)"},
		{"evictionSoft", Honoured, "soft eviction thresholds, each with its grace period"},
		{"evictionSoftGracePeriod", Honoured, "how long a soft threshold must hold before eviction"},
		{"evictionPressureTransitionPeriod", Honoured, "how long a pressure condition stays after its last observation"},
		{"evictionMaxPodGracePeriod", Honoured, "the grace period cap of a soft eviction"},
		{"evictionMinimumReclaim", Honoured, "how far below a threshold eviction goes on reclaiming"},
		{"mergeDefaultEvictionSettings", Honoured, "true: a set evictionHard gains the default thresholds of the signals it does not name"},
		{"podsPerCore", Honoured, "when positive, caps the pods capacity (node status and admission) at podsPerCore × the number of CPUs, as upstream"},
		{"enableControllerAttachDetach", Honoured, "true: the Node carries the controller-managed attach-detach annotation; false: registered without it (removed from an existing Node), as upstream; berth has no attachable volume plugin, so there is nothing for it to attach itself"},
		{"protectKernelDefaults", Honoured, "true: berth refuses to start while a kernel tunable differs from upstream's required value; false: berth sets the differing ones, best effort (a failed write is logged; upstream stops outside a user namespace)"},
		{"makeIPTablesUtilChains", Honoured, "true: as upstream v1.37, berth keeps KUBE-IPTABLES-HINT (mangle) and, for IPv4, KUBE-FIREWALL with its localnet DROP rule (filter, from INPUT and OUTPUT), in iptables and ip6tables when present, and remakes them when a KUBE-KUBELET-CANARY chain shows a flush (internal/platform/iptables); false: no chains"},
		{"iptablesMasqueradeBit", Honoured, "validated (0 to 31) as upstream; upstream v1.37 uses it nowhere, nor does berth"},
		{"iptablesDropBit", Honoured, "validated (0 to 31) as upstream; upstream v1.37 uses it nowhere, nor does berth"},
		{"featureGates", Honoured, "every v1.37 gate name is known; a gate at its default is accepted; ContextualLogging, LoggingAlphaOptions, LoggingBetaOptions, MemoryQoS, QOSReserved, EventedPLEG (off: no container event stream; unset, berth uses it where the runtime has one), KubeletPodResourcesListUseActivePods, PodsAPI, ResourceHealthStatus (off: no device or claim health in containerStatuses[].allocatedResourcesStatus; only with ResourceHealthStatusMessage off too) and ResourceHealthStatusMessage are honoured either way; a gate berth always implements is refused when turned off, any other gate away from its default by name; a gate on whose dependency is off is refused naming both, as upstream's feature gate dependencies"},
		{"failSwapOn", Honoured, "true: berth refuses to start while /proc/swaps lists swap, with upstream's message; false: it runs, and containers get swap as memorySwap says"},
		{"memorySwap", Honoured, "swapBehavior \"\" or NoSwap: where the kernel accounts swap per cgroup, no swap for containers (memory.swap.max 0 on cgroup v2, a memory+swap limit equal to the memory limit on v1); LimitedSwap (cgroup v2 only, refused at start on v1 as upstream): Burstable containers get their memory request's share of the node's swap"},
		{"containerLogMaxSize", Honoured, "a running container's log is rotated at this size (negative: never)"},
		{"containerLogMaxFiles", Honoured, "the current log and its rotated files (older ones gzipped)"},
		{"containerLogMaxWorkers", Honoured, "logs rotated concurrently"},
		{"containerLogMonitorInterval", Honoured, "how often log sizes are checked"},
		{"configMapAndSecretChangeDetectionStrategy", Honoured, "how volumes, env and pull secrets read configMaps and secrets: Watch (per-object watches), Cache (GET per node TTL) or Get"},
		{"systemReserved", Honoured, "subtracted from capacity to give allocatable and the kubepods limits; set on systemReservedCgroup when enforced"},
		{"kubeReserved", Honoured, "subtracted from capacity to give allocatable and the kubepods limits; set on kubeReservedCgroup when enforced"},
		{"reservedSystemCPUs", Honoured, "validated as upstream; their count replaces the cpu of systemReserved (kubeReserved reserves none); with cpuManagerPolicy static they are the reserved CPUs"},
		{"showHiddenMetricsForVersion", Honoured, "empty or the previous minor version (\"1.36\"), validated by component-base as upstream; upstream v1.37's kubelet has no deprecated (hidden) metric, nor has berth, so every metric is shown either way"},
		{"systemReservedCgroup", Honoured, "the existing cgroup systemReserved is set on when system-reserved(-compressible) is enforced"},
		{"kubeReservedCgroup", Honoured, "the existing cgroup kubeReserved is set on when kube-reserved(-compressible) is enforced"},
		{"enforceNodeAllocatable", Honoured, "pods: kubepods limited to capacity less reserved; system-reserved, kube-reserved (cpu, memory, pids) and their -compressible variants (cpu only) on the reserved cgroups; none"},
		{"allowedUnsafeSysctls", Honoured, "sysctl names and prefixes (\"kernel.msg*\") pods may set besides the safe ones; each must be namespaced, as upstream"},
		{"defaultPodSysctls", Honoured, "with the DefaultPodSysctls gate, every pod sandbox gets them (by namespace, as upstream) unless the pod sets the same name"},
		{"volumePluginDir", Accepted, noFlex},
		{"providerID", Honoured, "the Node's spec.providerID at registration"},
		{"kernelMemcgNotification", Honoured, "true: on cgroup v1 a crossing of a memory.available or allocatableMemory.available threshold, registered on the root and kubepods memory cgroups through cgroup.event_control, triggers an eviction pass at once; as upstream, no notification on cgroup v2 (polling every 10 s only)"},
		{"logging", Honoured, "format (text or json), flushFrequency, verbosity, vmodule and options, validated and applied by component-base's logs API, as upstream"},
		{"enableSystemLogHandler", Honoured, "/logs/ serves /var/log (with enableDebuggingHandlers)"},
		{"enableSystemLogQuery", Honoured, "with enableSystemLogHandler (required, as upstream; NodeLogQuery is GA), /logs/?query= answers node log queries as upstream on Linux: journalctl for journald units, /var/log/<service>[.log] otherwise, a file query through the file server; parameters validated as upstream, journalctl run without a shell under a 30s deadline, output capped at 64 MiB (internal/serve/logquery)"},
		{"shutdownGracePeriod", Honoured, "graceful node shutdown through a systemd-logind delay inhibitor lock (0s: none)"},
		{"shutdownGracePeriodCriticalPods", Honoured, "the part of shutdownGracePeriod kept for system-critical pods, which end last"},
		{"shutdownGracePeriodByPodPriority", Honoured, "graceful node shutdown budgets by pod priority, lowest priority first"},
		{"crashLoopBackOff", Honoured, "maxContainerRestartPeriod (1s to 300s; KubeletCrashLoopBackOffMax, on by default, cannot be turned off) caps the container restart back-off, and lowers the initial 10s delay when below it, as upstream"},
		{"reservedMemory", Honoured, "validated as upstream (memory and hugepages-<size>, none zero, no duplicate per NUMA node); with Static, kept from pods on each NUMA node, and at start its NUMA nodes must exist and its sums equal kubeReserved + systemReserved + the hard eviction threshold, as upstream"},
		{"enableProfilingHandler", Honoured, "/debug/pprof/ (with enableDebuggingHandlers)"},
		{"enableDebugFlagsHandler", Honoured, "with enableDebuggingHandlers, PUT /debug/flags/v (nodes/proxy) sets the log verbosity; false answers 405"},
		{"seccompDefault", Honoured, "true makes RuntimeDefault the seccomp profile of containers that ask for none"},
		{"memoryThrottlingFactor", Honoured, "with MemoryQoS on cgroup v2, memory.high of containers (and of pods with pod-level memory limits) = request + factor × (limit or allocatable memory - request), rounded down to pages; unset (the default): no memory.high"},
		{"memoryReservationPolicy", Honoured, "with MemoryQoS on cgroup v2: None sets memory.min and memory.low 0; TieredReservation sets memory.min (Guaranteed) and memory.low (Burstable) from memory requests on containers, pods and QoS cgroups"},
		{"registerWithTaints", Honoured, "taints the Node is registered with (--register-with-taints overrides)"},
		{"registerNode", Honoured, "false: berth updates an existing Node but does not create it"},
		{"tracing", Honoured, "spans (syncPod, syncTerminatingPod, syncTerminatedPod and one per CRI call) exported by OTLP gRPC to endpoint (default localhost:4317) at samplingRatePerMillion (default 0: only what a parent span samples), through component-base's tracing, as upstream; unset: no tracer provider at all"},
		{"localStorageCapacityIsolation", Honoured, "true: ephemeral-storage is in the node's capacity and allocatable (and needed for Ready), and emptyDir sizeLimit and ephemeral-storage limits are enforced by eviction; false (rootless hosts): neither, as upstream"},
		{"containerRuntimeEndpoint", Honoured, "the CRI runtime service endpoint"},
		{"imageServiceEndpoint", Honoured, "the CRI image service endpoint (empty: the runtime endpoint)"},
		{"failCgroupV1", Honoured, "true (the default, as upstream): berth refuses to start on a cgroup v1 host with upstream's message; false: it runs on cgroup v1"},
		{"userNamespaces", Honoured, "idsPerPod: the host IDs each hostUsers: false pod maps (65536 by default), allocated without overlap from the kubelet user's subordinate IDs (getsubids, or /etc/subuid and /etc/subgid) or else from idsPerPod up to 2^32; a runtime that does not declare user namespace support refuses such pods, as upstream"},
	}
}

// flagSupport lists every flag that Flags registers: the flags that are not
// KubeletConfiguration fields, then one row per configFlags entry, whose
// status is that of the field it sets (a flag is a way of setting the field,
// validated and refused exactly as the field in a file).
func flagSupport() []FieldSupport {
	rows := plainFlagSupport()
	fields := map[string]FieldSupport{}
	for _, f := range kubeletFieldSupport() {
		fields[f.Name] = f
	}
	for _, c := range configFlags() {
		top, _, _ := strings.Cut(c.Field, ".")
		row := fields[top]
		rows = append(rows, FieldSupport{Name: "--" + c.Name, Support: row.Support, Reason: row.Reason})
	}
	return rows
}

const noFlex = "the FlexVolume drivers' directory: berth has no FlexVolume support; a pod with a flexVolume volume fails to mount with \"type flexVolume is not supported by berth yet\" (a FailedMount event)"

// plainFlagSupport lists the flags that are not KubeletConfiguration fields,
// in upstream's order (KubeletFlags.AddFlags), then berth's own.
func plainFlagSupport() []FieldSupport {
	return []FieldSupport{
		{"--config", Honoured, "the KubeletConfiguration file (YAML or JSON, strict)"},
		{"--config-dir", Honoured, "*.conf drop-ins merged in lexical order over --config"},
		{"--kubeconfig", Honoured, "cluster mode: the API server and the node's credentials"},
		{"--bootstrap-kubeconfig", Honoured, "TLS bootstrap: when --kubeconfig is missing or its client certificate expired or unusable, a client certificate is requested with these credentials and --kubeconfig written to use it"},
		{"--hostname-override", Honoured, "the node name (lower-cased)"},
		{"--node-ip", Honoured, "validated; at most one IPv4 and one IPv6 address"},
		{"--cert-dir", Honoured, "the kubelet-client and kubelet-server key pairs (<name>-<time>.pem, <name>-current.pem), and the self-signed kubelet.crt/kubelet.key"},
		{"--cloud-provider", Honoured, "\"\" or external: the Node is registered with the node.cloudprovider.kubernetes.io/uninitialized taint and its addresses are left to the cloud controller manager"},
		{"--root-dir", Honoured, "berth's state directory"},
		{"--seccomp-default", Honoured, "true enables seccompDefault (either one enables it, as upstream)"},
		{"--node-labels", Honoured, "labels the Node is registered with"},
		{"--lock-file", Honoured, "berth holds an exclusive flock on the file while it runs (waits for it at start)"},
		{"--exit-on-lock-contention", Honoured, "berth stops (pods keep running) when another process opens the lock file"},
		{"--minimum-container-ttl-duration", Honoured, "container GC: a dead container created more recently is kept"},
		{"--maximum-dead-containers-per-container", Honoured, "container GC: dead instances kept per pod and container (negative: no limit)"},
		{"--maximum-dead-containers", Honoured, "container GC: dead containers kept on the node (negative: no limit)"},
		{"--experimental-mounter-path", Honoured, "the mount binary nfs volumes are mounted with, as upstream (\"\": mount from PATH)"},
		{"--experimental-allocatable-ignore-eviction", Honoured, "true: the hard eviction thresholds are not reserved from the node's allocatable, and the eviction manager has no allocatableMemory.available threshold, as upstream"},
		{"--runtime-cgroups", Honoured, "an absolute cgroup name: the runtime's cgroup, reported as the \"runtime\" system container of /stats/summary (as upstream with a remote runtime, berth does not move the runtime)"},
		{"--image-credential-provider-config", Honoured, "the CredentialProviderConfig (file or directory; kubelet.config.k8s.io v1, v1beta1, v1alpha1), validated at load; tokenAttributes (service account token mode) is refused"},
		{"--image-credential-provider-bin-dir", Honoured, "where the credential provider plugin binaries are; each provider's must exist and be executable"},
		{"--housekeeping-interval", Honoured, "berth has no cAdvisor: the stats provider samples cumulative CPU time at this period, for the usage rates (usageNanoCores) that cAdvisor's housekeeping computes upstream; must be positive"},
		{"--pod-infra-container-image", Honoured, "the sandbox (pause) image (berth's own: removed upstream)"},
		{"--pleg-relist-period", Honoured, "the period of the PLEG's full relist, at least and by default upstream's fixed 1s (berth's own: upstream has no such flag); a longer one shows the container event stream at work in tests"},
		{"--device-plugin-dir", Honoured, "the device plugin directory, the device manager's kubelet.sock and checkpoint, by default upstream's fixed /var/lib/kubelet/device-plugins whatever --root-dir (berth's own: upstream has no such flag); tests that run several nodes on one host give each its own"},
	}
}
