package podsource

import (
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

var (
	restartPolicies          = []corev1.RestartPolicy{corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever}
	dnsPolicies              = []corev1.DNSPolicy{corev1.DNSClusterFirstWithHostNet, corev1.DNSClusterFirst, corev1.DNSDefault, corev1.DNSNone}
	pullPolicies             = []corev1.PullPolicy{corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever}
	terminationMessagePolicy = []corev1.TerminationMessagePolicy{corev1.TerminationMessageReadFile, corev1.TerminationMessageFallbackToLogsOnError}
	protocols                = []corev1.Protocol{corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP}
)

// ValidatePod checks a defaulted pod for what upstream's ValidatePodCreate
// would reject and what matters on a node: metadata names, the UID (which
// becomes a path element, see podutil.ValidateUID), containers (and no
// ephemeral containers),
// images, enum values, ports, env names, resources, volumes and mounts
// (with the paths they name: validate_paths.go). Each
// error names its field path. It is pure.
func ValidatePod(pod *corev1.Pod) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMeta(&pod.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	if reason := podutil.UIDProblem(pod.UID); reason != "" {
		allErrs = append(allErrs, field.Invalid(field.NewPath("metadata", "uid"), podutil.ShortUID(pod.UID), reason))
	}
	spec := &pod.Spec
	specPath := field.NewPath("spec")
	if len(spec.Containers) == 0 {
		allErrs = append(allErrs, field.Required(specPath.Child("containers"), "must have at least one container"))
	}
	if len(spec.EphemeralContainers) > 0 {
		// Upstream's ValidatePodCreate: ephemeral containers only come
		// through the API's ephemeralcontainers subresource, which a
		// static pod has none of.
		allErrs = append(allErrs, field.Forbidden(specPath.Child("ephemeralContainers"), "cannot be set on create"))
	}
	if !contains(restartPolicies, spec.RestartPolicy) {
		allErrs = append(allErrs, field.NotSupported(specPath.Child("restartPolicy"), spec.RestartPolicy, restartPolicies))
	}
	if !contains(dnsPolicies, spec.DNSPolicy) {
		allErrs = append(allErrs, field.NotSupported(specPath.Child("dnsPolicy"), spec.DNSPolicy, dnsPolicies))
	}
	if spec.DNSPolicy == corev1.DNSNone && (spec.DNSConfig == nil || len(spec.DNSConfig.Nameservers) == 0) {
		allErrs = append(allErrs, field.Required(specPath.Child("dnsConfig", "nameservers"), "must provide at least one DNS nameserver when dnsPolicy is None"))
	}
	if g := spec.TerminationGracePeriodSeconds; g != nil && *g < 0 {
		allErrs = append(allErrs, field.Invalid(specPath.Child("terminationGracePeriodSeconds"), *g, "must be greater than or equal to 0"))
	}
	if d := spec.ActiveDeadlineSeconds; d != nil && *d <= 0 {
		allErrs = append(allErrs, field.Invalid(specPath.Child("activeDeadlineSeconds"), *d, "must be greater than 0"))
	}
	allErrs = append(allErrs, validateHostUsers(spec, specPath)...)
	volumes, volErrs := validateVolumes(spec.Volumes, specPath.Child("volumes"))
	allErrs = append(allErrs, volErrs...)
	names := sets.New[string]()
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		p := specPath.Child("initContainers").Index(i)
		allErrs = append(allErrs, validateContainer(c, names, volumes, spec.HostNetwork, p)...)
		if c.RestartPolicy != nil && *c.RestartPolicy != corev1.ContainerRestartPolicyAlways {
			allErrs = append(allErrs, field.NotSupported(p.Child("restartPolicy"), *c.RestartPolicy, []corev1.ContainerRestartPolicy{corev1.ContainerRestartPolicyAlways}))
		}
	}
	for i := range spec.Containers {
		p := specPath.Child("containers").Index(i)
		allErrs = append(allErrs, validateContainer(&spec.Containers[i], names, volumes, spec.HostNetwork, p)...)
	}
	return allErrs
}

// validateVolumes checks volume names and that each has exactly one source.
// It returns the set of valid names for the mounts to refer to.
func validateVolumes(volumes []corev1.Volume, path *field.Path) (sets.Set[string], field.ErrorList) {
	var allErrs field.ErrorList
	names := sets.New[string]()
	for i, v := range volumes {
		p := path.Index(i)
		switch {
		case v.Name == "":
			allErrs = append(allErrs, field.Required(p.Child("name"), ""))
		case names.Has(v.Name):
			allErrs = append(allErrs, field.Duplicate(p.Child("name"), v.Name))
		default:
			for _, msg := range validation.IsDNS1123Label(v.Name) {
				allErrs = append(allErrs, field.Invalid(p.Child("name"), v.Name, msg))
			}
			names.Insert(v.Name)
		}
		if n := countVolumeSources(&v.VolumeSource); n != 1 {
			allErrs = append(allErrs, field.Invalid(p, v.Name, "must specify exactly one volume type"))
		}
		allErrs = append(allErrs, validateVolumePaths(&v.VolumeSource, p)...)
	}
	return names, allErrs
}

func validateContainer(c *corev1.Container, names, volumes sets.Set[string], hostNetwork bool, path *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch {
	case c.Name == "":
		allErrs = append(allErrs, field.Required(path.Child("name"), ""))
	case names.Has(c.Name):
		allErrs = append(allErrs, field.Duplicate(path.Child("name"), c.Name))
	default:
		for _, msg := range validation.IsDNS1123Label(c.Name) {
			allErrs = append(allErrs, field.Invalid(path.Child("name"), c.Name, msg))
		}
		names.Insert(c.Name)
	}
	if c.Image == "" {
		allErrs = append(allErrs, field.Required(path.Child("image"), ""))
	} else if strings.TrimSpace(c.Image) != c.Image {
		allErrs = append(allErrs, field.Invalid(path.Child("image"), c.Image, "must not have leading or trailing whitespace"))
	}
	if !contains(pullPolicies, c.ImagePullPolicy) {
		allErrs = append(allErrs, field.NotSupported(path.Child("imagePullPolicy"), c.ImagePullPolicy, pullPolicies))
	}
	if !contains(terminationMessagePolicy, c.TerminationMessagePolicy) {
		allErrs = append(allErrs, field.NotSupported(path.Child("terminationMessagePolicy"), c.TerminationMessagePolicy, terminationMessagePolicy))
	}
	allErrs = append(allErrs, validatePorts(c.Ports, hostNetwork, path.Child("ports"))...)
	allErrs = append(allErrs, validateEnv(c.Env, path.Child("env"))...)
	allErrs = append(allErrs, validateResources(&c.Resources, path.Child("resources"))...)
	allErrs = append(allErrs, validateMounts(c.VolumeMounts, volumes, path.Child("volumeMounts"))...)
	return allErrs
}

func validatePorts(ports []corev1.ContainerPort, hostNetwork bool, path *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	names := sets.New[string]()
	for i, port := range ports {
		p := path.Index(i)
		if port.Name != "" {
			for _, msg := range validation.IsValidPortName(port.Name) {
				allErrs = append(allErrs, field.Invalid(p.Child("name"), port.Name, msg))
			}
			if names.Has(port.Name) {
				allErrs = append(allErrs, field.Duplicate(p.Child("name"), port.Name))
			}
			names.Insert(port.Name)
		}
		if port.ContainerPort == 0 {
			allErrs = append(allErrs, field.Required(p.Child("containerPort"), ""))
		} else {
			for _, msg := range validation.IsValidPortNum(int(port.ContainerPort)) {
				allErrs = append(allErrs, field.Invalid(p.Child("containerPort"), port.ContainerPort, msg))
			}
		}
		if port.HostPort != 0 {
			for _, msg := range validation.IsValidPortNum(int(port.HostPort)) {
				allErrs = append(allErrs, field.Invalid(p.Child("hostPort"), port.HostPort, msg))
			}
			if hostNetwork && port.HostPort != port.ContainerPort {
				allErrs = append(allErrs, field.Invalid(p.Child("hostPort"), port.HostPort, "must match `containerPort` when `hostNetwork` is true"))
			}
		}
		if !contains(protocols, port.Protocol) {
			allErrs = append(allErrs, field.NotSupported(p.Child("protocol"), port.Protocol, protocols))
		}
	}
	return allErrs
}

// validateEnv checks names with the relaxed rule upstream now applies
// (printable ASCII, no '='), and that a value and valueFrom are exclusive.
func validateEnv(env []corev1.EnvVar, path *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, ev := range env {
		p := path.Index(i)
		if ev.Name == "" {
			allErrs = append(allErrs, field.Required(p.Child("name"), ""))
		} else {
			for _, msg := range validation.IsRelaxedEnvVarName(ev.Name) {
				allErrs = append(allErrs, field.Invalid(p.Child("name"), ev.Name, msg))
			}
		}
		if ev.ValueFrom == nil {
			continue
		}
		if ev.Value != "" {
			allErrs = append(allErrs, field.Invalid(p.Child("valueFrom"), "", "may not be specified when `value` is not empty"))
		}
		vf := ev.ValueFrom
		n := 0
		for _, set := range []bool{vf.FieldRef != nil, vf.ResourceFieldRef != nil, vf.ConfigMapKeyRef != nil, vf.SecretKeyRef != nil, vf.FileKeyRef != nil} {
			if set {
				n++
			}
		}
		if n != 1 {
			allErrs = append(allErrs, field.Invalid(p.Child("valueFrom"), "", "must specify exactly one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef`, `secretKeyRef` or `fileKeyRef`"))
		}
	}
	return allErrs
}

// validateResources checks that quantities are non-negative, resource names
// qualified, and each request at most its limit.
func validateResources(r *corev1.ResourceRequirements, path *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, l := range []struct {
		name string
		list corev1.ResourceList
	}{{"limits", r.Limits}, {"requests", r.Requests}} {
		for name, q := range l.list {
			p := path.Child(l.name).Key(string(name))
			for _, msg := range validation.IsQualifiedName(string(name)) {
				allErrs = append(allErrs, field.Invalid(p, name, msg))
			}
			if q.Sign() < 0 {
				allErrs = append(allErrs, field.Invalid(p, q.String(), "must be greater than or equal to 0"))
			}
		}
	}
	for name, req := range r.Requests {
		if limit, ok := r.Limits[name]; ok && req.Cmp(limit) > 0 {
			allErrs = append(allErrs, field.Invalid(path.Child("requests").Key(string(name)), req.String(),
				"must be less than or equal to "+string(name)+" limit of "+limit.String()))
		}
	}
	return allErrs
}

func validateMounts(mounts []corev1.VolumeMount, volumes sets.Set[string], path *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	paths := sets.New[string]()
	for i, m := range mounts {
		p := path.Index(i)
		if m.Name == "" {
			allErrs = append(allErrs, field.Required(p.Child("name"), ""))
		} else if !volumes.Has(m.Name) {
			allErrs = append(allErrs, field.NotFound(p.Child("name"), m.Name))
		}
		if m.MountPath == "" {
			allErrs = append(allErrs, field.Required(p.Child("mountPath"), ""))
		} else if paths.Has(m.MountPath) {
			allErrs = append(allErrs, field.Invalid(p.Child("mountPath"), m.MountPath, "must be unique"))
		}
		paths.Insert(m.MountPath)
		allErrs = append(allErrs, validateSubPaths(&m, p)...)
	}
	return allErrs
}

func contains[T comparable](values []T, v T) bool {
	for _, have := range values {
		if have == v {
			return true
		}
	}
	return false
}

// countVolumeSources counts the set (non-nil) members of a VolumeSource,
// whose fields are all pointers.
func countVolumeSources(src *corev1.VolumeSource) int {
	v := reflect.ValueOf(src).Elem()
	n := 0
	for i := range v.NumField() {
		if !v.Field(i).IsNil() {
			n++
		}
	}
	return n
}
