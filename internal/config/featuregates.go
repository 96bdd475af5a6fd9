package config

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/version"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/component-base/featuregate"
	logsapi "k8s.io/component-base/logs/api/v1"
	zpagesfeatures "k8s.io/component-base/zpages/features"
	"k8s.io/klog/v2"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// gateSpec is a feature gate's spec in force at KubernetesVersion, one row
// of featuregates_table.go.
type gateSpec struct {
	Name string
	// Since is the release the spec took effect in.
	Since      string
	Default    bool
	PreRelease string
	Locked     bool
}

// builtInGates are the gates whose behaviour berth always has, with what
// berth does. At their default (on) they are accepted; turned off they are
// refused, since berth cannot turn the behaviour off. A test holds each to
// a gate that is on by default upstream.
func builtInGates() map[string]string {
	return map[string]string{
		"ContainerRestartRules":                "berth always honours a container's restartPolicy and restartPolicyRules",
		"RestartAllContainersOnContainerExits": "berth always honours the RestartAllContainers rule action",
		"PortForwardWebsockets":                "berth always serves port-forward over WebSockets",
		"ExtendWebSocketsToKubelet":            "berth always serves exec, attach and port-forward over WebSockets",
		"PodCertificateRequest":                "berth always serves projected podCertificate sources (PodCertificateRequest, GA in 1.37)",
	}
}

// honouredGates are the gates berth honours either way, with how: the
// logging gates, which component-base's logs API reads from the gate set
// berth hands it (validateLogging, and cmd/berth's applyLogging), and
// DefaultPodSysctls, which defaultPodSysctls requires (validateSettings);
// KubeletEnsureSecretPulledImages (validatePullRecords, the agent);
// MemoryQoS and QOSReserved, which reach the container manager and the
// container configs (validateMemory); and the CPU manager options' gates
// (validateCPUManager); and EventedPLEG (Config.ContainerEvents); the
// pod APIs' KubeletPodResourcesListUseActivePods and PodsAPI (podapis.go);
// ResourceHealthStatus and ResourceHealthStatusMessage (resourcehealth.go).
func honouredGates() map[string]string {
	return map[string]string{
		string(logsapi.ContextualLogging):   "contextual logging, on or off, by component-base's logs API",
		string(logsapi.LoggingAlphaOptions): "the alpha logging options (split streams, info buffer sizes), by component-base's logs API",
		string(logsapi.LoggingBetaOptions):  "the beta logging options, by component-base's logs API",
		"DefaultPodSysctls":                 "defaultPodSysctls may be set only with it on",
		GateEnsureSecretPulledImages:        "the image pull records, on or off (internal/images/pullrecords)",
		gateMemoryQoS:                       "on cgroup v2, containers' and pods' memory.min, memory.low and memory.high as upstream (off: memory.high reset to max)",
		gateQOSReserved:                     "qosReserved limits the burstable and besteffort QoS cgroups' memory only with it on, as upstream",
		"CPUManagerPolicyAlphaOptions":      "the CPU manager's alpha options may be set only with it on",
		"CPUManagerPolicyBetaOptions":       "the CPU manager's beta options may be set only with it on",
		EventedPLEG:                         "the PLEG follows the runtime's container event stream unless it is set to false (Config.ContainerEvents)",
		gatePodResourcesListUseActivePods:   "the pod resources API's List shows the active pods only, or with it off every pod, as upstream",
		gatePodsAPI:                         "the Pods API is served on <root-dir>/pods-api/pods-api.sock only with it on",
		gateResourceHealthStatus:            "the containers' allocatedResourcesStatus (device plugins' and DRA drivers' device health) only with it on, as upstream",
		gateResourceHealthStatusMessage:     "a DRA driver's device health message is shown only with it (and ResourceHealthStatus) on, as upstream",
	}
}

// loggingGates returns the gate set with the honoured gates of gates
// applied, for validating logging; the other gates are refused (or at
// their defaults) by validateFeatureGates.
func loggingGates(gates map[string]bool) (gateSet, error) {
	fg, err := newFeatureGate()
	if err != nil {
		return nil, err
	}
	honoured := map[string]bool{}
	for name, v := range gates {
		if _, ok := honouredGates()[name]; ok {
			honoured[name] = v
		}
	}
	if err := fg.SetFromMapWithLogger(logr.Discard(), honoured); err != nil {
		return nil, fmt.Errorf("set logging feature gates: %w", err)
	}
	return fg, nil
}

// newFeatureGate returns the gate set of the upstream kubelet at
// KubernetesVersion: its own gates (featuregates_table.go) and those of
// component-base's logging and zpages and of client-go, which those
// libraries add themselves first, as upstream's kubelet has them add.
func newFeatureGate() (gateSet, error) {
	fg := featuregate.NewVersionedFeatureGate(version.MustParseGeneric(KubernetesVersion))
	if err := logsapi.AddFeatureGates(fg); err != nil {
		return nil, fmt.Errorf("add logging feature gates: %w", err)
	}
	if err := zpagesfeatures.AddFeatureGates(fg); err != nil {
		return nil, fmt.Errorf("add zpages feature gates: %w", err)
	}
	if err := clientfeatures.AddVersionedFeaturesToExistingFeatureGates(clientGates{fg}); err != nil {
		return nil, fmt.Errorf("add client-go feature gates: %w", err)
	}
	specs := make(map[featuregate.Feature]featuregate.VersionedSpecs, len(upstreamKubeletGates))
	known := fg.GetAll()
	for _, g := range upstreamKubeletGates {
		if _, ok := known[featuregate.Feature(g.Name)]; ok {
			continue // upstream lists some library gates too, with their specs
		}
		// The spec in force at KubernetesVersion is the gate's only one, in
		// force from version 0.0 (component-base's way for unversioned specs).
		spec := featuregate.FeatureSpec{Version: version.MajorMinor(0, 0), Default: g.Default, LockToDefault: g.Locked}
		if err := setPreRelease(&spec, g.PreRelease); err != nil {
			return nil, fmt.Errorf("feature gate %q: %w", g.Name, err)
		}
		specs[featuregate.Feature(g.Name)] = featuregate.VersionedSpecs{spec}
	}
	if err := fg.AddVersioned(specs); err != nil {
		return nil, fmt.Errorf("add kubelet feature gates: %w", err)
	}
	return fg, nil
}

// gateSet is component-base's gate set, as newFeatureGate builds it.
type gateSet interface {
	featuregate.MutableVersionedFeatureGate
	featuregate.MutableFeatureGateWithLogger
}

// setPreRelease sets spec's stage from its name, as featuregates_table.go
// (upstream's constant names) or client-go (their values) spell it.
func setPreRelease(spec *featuregate.FeatureSpec, stage string) error {
	switch strings.ToUpper(stage) {
	case "PREALPHA", string(featuregate.PreAlpha):
		spec.PreRelease = featuregate.PreAlpha
	case string(featuregate.Alpha):
		spec.PreRelease = featuregate.Alpha
	case string(featuregate.Beta):
		spec.PreRelease = featuregate.Beta
	case "GA", string(featuregate.GA):
		spec.PreRelease = featuregate.GA
	case string(featuregate.Deprecated):
		spec.PreRelease = featuregate.Deprecated
	default:
		return fmt.Errorf("unknown stage %q", stage)
	}
	return nil
}

// clientGates adds client-go's gates, declared with client-go's own types,
// to a component-base gate set.
type clientGates struct {
	fg featuregate.MutableVersionedFeatureGate
}

func (c clientGates) AddVersioned(in map[clientfeatures.Feature]clientfeatures.VersionedSpecs) error {
	out := make(map[featuregate.Feature]featuregate.VersionedSpecs, len(in))
	for name, specs := range in {
		for _, s := range specs {
			spec := featuregate.FeatureSpec{Default: s.Default, LockToDefault: s.LockToDefault, Version: s.Version}
			if err := setPreRelease(&spec, string(s.PreRelease)); err != nil {
				return fmt.Errorf("client-go feature gate %q: %w", name, err)
			}
			out[featuregate.Feature(name)] = append(out[featuregate.Feature(name)], spec)
		}
	}
	return c.fg.AddVersioned(out)
}

// validateFeatureGates checks featureGates as upstream does (every name
// known, locked gates at their value) and then as berth must: a gate at its
// default or an honoured one is accepted, a built-in gate turned off and
// any other gate away from its default are refused by name, with the
// default. Then, as upstream, the gates' dependencies
// (validateGateDependencies).
func validateFeatureGates(logger klog.Logger, gates map[string]bool) []problem {
	names := make([]string, 0, len(gates))
	for name := range gates {
		names = append(names, name)
	}
	sort.Strings(names)
	var ps []problem
	for _, name := range names {
		given := gates[name]
		fg, err := newFeatureGate()
		if err != nil {
			return append(ps, fieldProblem("featureGates", "%v", err))
		}
		if err := fg.SetFromMapWithLogger(logger, map[string]bool{name: given}); err != nil {
			ps = append(ps, fieldProblem("featureGates", "%v", err))
			continue
		}
		def, ok := gateDefault(fg, name)
		if _, honoured := honouredGates()[name]; !ok || honoured || given == def {
			continue
		}
		if does, builtIn := builtInGates()[name]; builtIn {
			ps = append(ps, fieldProblem("featureGates", "%s=%t is not supported: %s (only the default %s=%t is accepted)", name, given, does, name, def))
			continue
		}
		ps = append(ps, fieldProblem("featureGates", "%s=%t is not supported by berth (only the %s default %s=%t is accepted)", name, given, KubernetesVersion, name, def))
	}
	if len(ps) > 0 {
		return ps
	}
	return validateGateDependencies(gates)
}

// validateGateDependencies refuses, as upstream's component-base does once
// every gate is set (SetFromMap with defaultKubernetesFeatureGateDependencies
// added), a gate enabled (given or by default) while a gate it depends on
// is disabled: ResourceHealthStatus=false with ResourceHealthStatusMessage
// left at its default (on), for one. The message is upstream's, with what
// to set.
func validateGateDependencies(gates map[string]bool) []problem {
	fg, err := newFeatureGate()
	if err != nil {
		return []problem{fieldProblem("featureGates", "%v", err)}
	}
	// The gates' warnings were logged by validateFeatureGates.
	if err := fg.SetFromMapWithLogger(logr.Discard(), gates); err != nil {
		return []problem{fieldProblem("featureGates", "%v", err)}
	}
	known := fg.GetAll()
	enabled := func(name string) bool {
		_, ok := known[featuregate.Feature(name)]
		return ok && fg.Enabled(featuregate.Feature(name))
	}
	var ps []problem
	for _, name := range slices.Sorted(maps.Keys(upstreamGateDependencies)) {
		if !enabled(name) {
			continue
		}
		var off []string
		for _, dep := range upstreamGateDependencies[name] {
			if !enabled(dep) {
				off = append(off, dep)
			}
		}
		if len(off) > 0 {
			ps = append(ps, fieldProblem("featureGates", "%s is enabled, but depends on features that are disabled: %v (enable %s or set %s: false)",
				name, off, strings.Join(off, ", "), name))
		}
	}
	return ps
}

// gateOn is the one reading of a kubelet feature gate: its value in
// featureGates, else its upstream default at KubernetesVersion
// (upstreamKubeletGates). Code outside this package asks the Config's
// methods (MemoryQoS, ContainerEvents, EnsureSecretPulledImages, ...) and
// never reads a gate by name (archtest holds it).
func gateOn(kc *kubeletconfigv1beta1.KubeletConfiguration, name string) bool {
	if v, ok := kc.FeatureGates[name]; ok {
		return v
	}
	for _, g := range upstreamKubeletGates {
		if g.Name == name {
			return g.Default
		}
	}
	return false
}

// gateDefault returns a gate's default at KubernetesVersion. AllAlpha and
// AllBeta, which component-base keeps outside the known specs, are off.
func gateDefault(fg gateSet, name string) (bool, bool) {
	if name == "AllAlpha" || name == "AllBeta" {
		return false, true
	}
	spec, ok := fg.GetAll()[featuregate.Feature(name)]
	return spec.Default, ok
}

// FeatureGates returns the gate set with featureGates applied, for the
// libraries that read gates (component-base's logging). Load has validated
// featureGates, so every gate in it is known and at a value berth accepts.
func (c *Config) FeatureGates(logger klog.Logger) (featuregate.FeatureGate, error) {
	fg, err := newFeatureGate()
	if err != nil {
		return nil, err
	}
	if err := fg.SetFromMapWithLogger(logger, c.Kubelet.FeatureGates); err != nil {
		return nil, fmt.Errorf("set feature gates: %w", err)
	}
	return fg, nil
}
