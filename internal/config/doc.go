// Package config owns berth's configuration: the upstream kubelet flags berth
// accepts, the KubeletConfiguration file (and --config-dir drop-ins), berth's
// own implementation of the upstream defaults, and validation.
//
// Load is the single entry point. It reads files only through the injected
// Env, so the whole pipeline (decode, merge, default, flags, validate) is a
// pure function of its inputs and is tested by golden files in testdata/.
//
// File map:
//   - flags.go:    Flags: every upstream kubelet flag (and berth's
//     --pod-infra-container-image) registered with upstream's names, types
//     and defaults, their help from support.go, and the node flags' parsers.
//   - configflags.go: configFlags, the flags that set a KubeletConfiguration
//     field (upstream's AddKubeletConfigFlags), and their bindings.
//   - flagvalues.go: the pflag values of upstream's pkg/util/flag berth needs.
//   - flagapply.go: flags given on the command line over the file and the
//     drop-ins; refusing the flags berth does not honour; naming where a
//     field's value came from (the flag, or the file or drop-in that set
//     it last) in problems about it (sources).
//   - unknownflags.go: CheckArgs, every unknown flag in one error, with the
//     nearest flag, the field to set, or why upstream removed it.
//   - decode.go:   strict decoding of a KubeletConfiguration, --config-dir merging.
//   - defaults.go: SetDefaults, berth's copy of the upstream v1beta1 defaults.
//   - support.go:  which KubeletConfiguration fields and flags berth honours.
//   - validate.go: value validation and the generic "not supported yet"
//     check (notSupported: the field, the value given, the default, why).
//   - validate_settings.go: logging (component-base's logs API), image
//     pull concurrency (and ImagePullLimit), hairpinMode, oomScoreAdj.
//   - validate_limits.go: the node's limits (podsPerCore, maxOpenFiles,
//     registryPullQPS and registryBurst, the crash loop back-off cap).
//   - validate_node.go: podLogsDir, runOnce (refused, as upstream v1.37),
//     the iptables bits, showHiddenMetricsForVersion (component-base) and
//     enableSystemLogQuery as upstream validates them, and
//     --housekeeping-interval.
//   - process.go: BlockProfiling, the decision on enableContentionProfiling.
//   - resolved.go: Settings, the optional fields' values as the wings read
//     them (unset: upstream's default, from SetDefaults); no code outside
//     config restates a default (archtest).
//   - host.go:    CheckHost, the checks of the configuration against the
//     host's facts at start (swap, cgroup v1, singleProcessOOMKill).
//   - validate_cgroups.go: the container manager's fields as upstream
//     validates them (cgroupsPerQOS, systemCgroups, reservedSystemCPUs,
//     enforceNodeAllocatable and the reserved cgroups), and
//     reservedSystemCPUs' override of the cpu reservations.
//   - featuregates.go: featureGates: upstream's gate set built with
//     component-base's featuregate (featuregates_table.go, generated, for
//     the kubelet's own gates; component-base and client-go add theirs),
//     which gates berth always implements, and the refusal of the rest
//     away from their defaults; the refusal, as upstream's, of a gate on
//     whose dependency is off (upstreamGateDependencies, generated with
//     the table); gateOn, the one reading of a gate, behind the
//     Config's methods (MemoryQoS, EnsureSecretPulledImages, ...).
//   - podapis.go: the gates of the node-local pod APIs, honoured either
//     way: KubeletPodResourcesListUseActivePods and PodsAPI.
//   - resourcehealth.go: ResourceHealthStatus and ResourceHealthStatusMessage,
//     honoured either way (the containers' allocatedResourcesStatus).
//   - problemfields.go: ValidationError.Fields, the fields and flags a
//     failed Load is about, for callers that must tell what blocks a start.
//   - configz.go: ConfigzView, the configuration /configz shows (secrets
//     redacted).
//   - compatdoc.go: renders docs/config-compat.md from support.go.
//   - credprovider.go: --image-credential-provider-config and -bin-dir:
//     the plugins' config loaded and validated at load time by
//     internal/images/credprovider, problems named by flag.
//
// upstream_test.go holds the copies to upstream (internal/testkit/upstreamsrc):
// KubernetesVersion is the k8s.io/kubernetes that tools/kube pins, berth's
// staging modules are that release's, and the defaults upstream keeps as
// data (evictionHard, the root and certificate directories) are its own.
// flagtable_test.go pins every flag (name, type, the field it sets, the
// KubeletFlags defaults) to upstream's cmd/kubelet/app/options.
// distros_test.go loads the configurations ten distributions write
// (testdata/distros) and holds README.md's Compatibility table to the
// fields that still block each.
// featuregates_upstream_test.go pins featuregates_table.go (the gates and
// their dependencies) to upstream's pkg/features/kube_features.go (-update
// rewrites it).
package config
