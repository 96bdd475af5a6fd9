package podsource

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Built-in priority classes the API server's Priority admission resolves
// without reading a PriorityClass object.
var builtinPriorities = map[string]int32{
	"system-node-critical":    2000001000,
	"system-cluster-critical": 2000000000,
}

// SetPodDefaults fills in the fields the API server would default on a v1
// Pod that berth relies on (upstream SetDefaults_Pod, SetDefaults_PodSpec,
// SetDefaults_Container, the volume, probe and port defaults, and what the
// Priority admission plugin sets). It is pure and idempotent; it mutates pod.
//
// Not done: pod-level resource defaulting (PodLevelResources), whose rules
// need the node's feature switches.
func SetPodDefaults(pod *corev1.Pod) {
	spec := &pod.Spec
	setPodSpecDefaults(spec)
	if spec.EnableServiceLinks == nil {
		spec.EnableServiceLinks = ptrTo(corev1.DefaultEnableServiceLinks)
	}
	setPriorityDefaults(spec)
	for i := range spec.InitContainers {
		setContainerDefaults(&spec.InitContainers[i], spec.HostNetwork)
	}
	for i := range spec.Containers {
		c := &spec.Containers[i]
		setContainerDefaults(c, spec.HostNetwork)
		setResizePolicyDefaults(c)
	}
	for i := range spec.EphemeralContainers {
		setContainerDefaults((*corev1.Container)(&spec.EphemeralContainers[i].EphemeralContainerCommon), false)
	}
	for i := range spec.Volumes {
		setVolumeDefaults(&spec.Volumes[i])
	}
	roundResourceList(spec.Overhead)
	if spec.Resources != nil {
		roundResourceList(spec.Resources.Limits)
		roundResourceList(spec.Resources.Requests)
	}
}

func setPodSpecDefaults(spec *corev1.PodSpec) {
	if spec.DNSPolicy == "" {
		spec.DNSPolicy = corev1.DNSClusterFirst
	}
	if spec.RestartPolicy == "" {
		spec.RestartPolicy = corev1.RestartPolicyAlways
	}
	if spec.SecurityContext == nil {
		spec.SecurityContext = &corev1.PodSecurityContext{}
	}
	if spec.TerminationGracePeriodSeconds == nil {
		spec.TerminationGracePeriodSeconds = ptrTo(int64(corev1.DefaultTerminationGracePeriodSeconds))
	}
	if spec.SchedulerName == "" {
		spec.SchedulerName = corev1.DefaultSchedulerName
	}
}

// setPriorityDefaults does what the Priority admission plugin does for a
// pod without a PriorityClass object to read: no class means priority 0, the
// built-in classes have their fixed values, and an unknown class is left
// unresolved.
func setPriorityDefaults(spec *corev1.PodSpec) {
	if spec.Priority == nil {
		if spec.PriorityClassName == "" {
			spec.Priority = ptrTo(int32(0))
		} else if p, ok := builtinPriorities[spec.PriorityClassName]; ok {
			spec.Priority = ptrTo(p)
		}
	}
	if spec.PreemptionPolicy == nil {
		spec.PreemptionPolicy = ptrTo(corev1.PreemptLowerPriority)
	}
}

func setContainerDefaults(c *corev1.Container, hostNetwork bool) {
	if c.ImagePullPolicy == "" {
		if imageTag(c.Image) == "latest" {
			c.ImagePullPolicy = corev1.PullAlways
		} else {
			c.ImagePullPolicy = corev1.PullIfNotPresent
		}
	}
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = corev1.TerminationMessagePathDefault
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
	}
	for i := range c.Ports {
		p := &c.Ports[i]
		if p.Protocol == "" {
			p.Protocol = corev1.ProtocolTCP
		}
		if hostNetwork && p.HostPort == 0 {
			p.HostPort = p.ContainerPort
		}
	}
	// Requests default to limits for the resources that have no request.
	if c.Resources.Limits != nil {
		if c.Resources.Requests == nil {
			c.Resources.Requests = make(corev1.ResourceList, len(c.Resources.Limits))
		}
		for name, q := range c.Resources.Limits {
			if _, ok := c.Resources.Requests[name]; !ok {
				c.Resources.Requests[name] = q.DeepCopy()
			}
		}
	}
	roundResourceList(c.Resources.Limits)
	roundResourceList(c.Resources.Requests)
	for _, p := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
		setProbeDefaults(p)
	}
	if c.Lifecycle != nil {
		setHandlerDefaults(c.Lifecycle.PostStart)
		setHandlerDefaults(c.Lifecycle.PreStop)
	}
	for i := range c.Env {
		if vf := c.Env[i].ValueFrom; vf != nil {
			setFieldRefDefaults(vf.FieldRef)
		}
	}
}

// setResizePolicyDefaults adds NotRequired resize policies for the CPU and
// memory a regular container requests (InPlacePodVerticalScaling).
func setResizePolicyDefaults(c *corev1.Container) {
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if _, ok := c.Resources.Requests[name]; !ok {
			continue
		}
		found := false
		for _, p := range c.ResizePolicy {
			found = found || p.ResourceName == name
		}
		if !found {
			c.ResizePolicy = append(c.ResizePolicy, corev1.ContainerResizePolicy{ResourceName: name, RestartPolicy: corev1.NotRequired})
		}
	}
}

func setProbeDefaults(p *corev1.Probe) {
	if p == nil {
		return
	}
	if p.TimeoutSeconds == 0 {
		p.TimeoutSeconds = 1
	}
	if p.PeriodSeconds == 0 {
		p.PeriodSeconds = 10
	}
	if p.SuccessThreshold == 0 {
		p.SuccessThreshold = 1
	}
	if p.FailureThreshold == 0 {
		p.FailureThreshold = 3
	}
	setHTTPGetDefaults(p.HTTPGet)
}

func setHandlerDefaults(h *corev1.LifecycleHandler) {
	if h != nil {
		setHTTPGetDefaults(h.HTTPGet)
	}
}

func setHTTPGetDefaults(h *corev1.HTTPGetAction) {
	if h == nil {
		return
	}
	if h.Path == "" {
		h.Path = "/"
	}
	if h.Scheme == "" {
		h.Scheme = corev1.URISchemeHTTP
	}
}

func setFieldRefDefaults(f *corev1.ObjectFieldSelector) {
	if f != nil && f.APIVersion == "" {
		f.APIVersion = "v1"
	}
}

func setVolumeDefaults(v *corev1.Volume) {
	src := &v.VolumeSource
	if (*src == corev1.VolumeSource{}) {
		src.EmptyDir = &corev1.EmptyDirVolumeSource{}
	}
	if s := src.Secret; s != nil && s.DefaultMode == nil {
		s.DefaultMode = ptrTo(corev1.SecretVolumeSourceDefaultMode)
	}
	if s := src.ConfigMap; s != nil && s.DefaultMode == nil {
		s.DefaultMode = ptrTo(corev1.ConfigMapVolumeSourceDefaultMode)
	}
	if s := src.DownwardAPI; s != nil {
		if s.DefaultMode == nil {
			s.DefaultMode = ptrTo(corev1.DownwardAPIVolumeSourceDefaultMode)
		}
		for i := range s.Items {
			setFieldRefDefaults(s.Items[i].FieldRef)
		}
	}
	if s := src.Projected; s != nil {
		if s.DefaultMode == nil {
			s.DefaultMode = ptrTo(corev1.ProjectedVolumeSourceDefaultMode)
		}
		for _, p := range s.Sources {
			if p.ServiceAccountToken != nil && p.ServiceAccountToken.ExpirationSeconds == nil {
				p.ServiceAccountToken.ExpirationSeconds = ptrTo(int64(3600))
			}
			if p.DownwardAPI != nil {
				for i := range p.DownwardAPI.Items {
					setFieldRefDefaults(p.DownwardAPI.Items[i].FieldRef)
				}
			}
		}
	}
	if s := src.HostPath; s != nil && s.Type == nil {
		s.Type = ptrTo(corev1.HostPathUnset)
	}
	if s := src.ISCSI; s != nil && s.ISCSIInterface == "" {
		s.ISCSIInterface = "default"
	}
}

// roundResourceList rounds every quantity up to milli precision, as the API
// server does (SetDefaults_ResourceList).
func roundResourceList(list corev1.ResourceList) {
	for name, q := range list {
		q.RoundUp(resource.Milli)
		list[name] = q
	}
}

// imageTag returns the tag of an image reference: "latest" when it has
// neither tag nor digest, "" when it has a digest and no tag. A registry
// host's port ("localhost:5000/app") is not a tag.
func imageTag(image string) string {
	name, _, hasDigest := strings.Cut(image, "@")
	last := name[strings.LastIndex(name, "/")+1:]
	if i := strings.LastIndex(last, ":"); i >= 0 {
		return last[i+1:]
	}
	if hasDigest {
		return ""
	}
	return "latest"
}

func ptrTo[T any](v T) *T { return &v }
