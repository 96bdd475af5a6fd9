package kuberuntime

import (
	"context"
	"fmt"
	"math"
	"net"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// EnvSource is where container environments look up what is not in the
// pod: configMaps and secrets (env valueFrom and envFrom), the services
// whose variables every container gets, and the node's allocatable
// resources (the default of a limit a resourceFieldRef reads). Declared
// here, by its consumer; implementations must be safe for concurrent use.
//
// A nil EnvSource (berth without an API server) has no services and no
// allocatable, and fails every configMap and secret reference.
type EnvSource interface {
	// ConfigMap and Secret return the object, or an error for which
	// apierrors.IsNotFound is true when it does not exist (an optional
	// reference is then skipped). The error's message is what the
	// container's CreateContainerConfigError says.
	ConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error)
	Secret(ctx context.Context, namespace, name string) (*corev1.Secret, error)
	// Services returns the services of every namespace, and whether they
	// have been read from the API at least once.
	Services() (services []*corev1.Service, synced bool)
	// NodeAllocatable returns the node's allocatable resources, nil when
	// not known yet.
	NodeAllocatable() corev1.ResourceList
}

// masterServiceNamespace and masterServiceName name the service whose
// variables every container gets, whatever enableServiceLinks says.
const (
	masterServiceNamespace = "default"
	masterServiceName      = "kubernetes"
)

// serviceEnv returns the service variables of a container in namespace ns
// (upstream getServiceEnvVarMap): those of the kubernetes service of the
// default namespace always, and those of every service of ns when
// enableServiceLinks. Services without a cluster IP (headless,
// ExternalName) give none. A service of ns named like the master service
// replaces it.
func serviceEnv(services []*corev1.Service, ns string, enableServiceLinks bool) map[string]string {
	picked := map[string]*corev1.Service{}
	for _, s := range services {
		if s.Spec.ClusterIP == "" || s.Spec.ClusterIP == corev1.ClusterIPNone {
			continue
		}
		if s.Namespace == masterServiceNamespace && s.Name == masterServiceName {
			if _, ok := picked[s.Name]; !ok {
				picked[s.Name] = s
			}
		} else if s.Namespace == ns && enableServiceLinks {
			picked[s.Name] = s
		}
	}
	vars := map[string]string{}
	for _, s := range picked {
		addServiceVars(vars, s)
	}
	return vars
}

// addServiceVars adds the variables of one service (upstream
// envvars.FromServices): <NAME>_SERVICE_HOST, <NAME>_SERVICE_PORT for the
// first port, <NAME>_SERVICE_PORT_<PORT NAME> for each named port, and the
// Docker link variables <NAME>_PORT and <NAME>_PORT_<port>_<PROTO>{,_PROTO,
// _PORT,_ADDR}.
func addServiceVars(vars map[string]string, s *corev1.Service) {
	if len(s.Spec.Ports) == 0 {
		return
	}
	prefix := envVarName(s.Name)
	ip := s.Spec.ClusterIP
	vars[prefix+"_SERVICE_HOST"] = ip
	vars[prefix+"_SERVICE_PORT"] = strconv.Itoa(int(s.Spec.Ports[0].Port))
	for i, p := range s.Spec.Ports {
		port := strconv.Itoa(int(p.Port))
		if p.Name != "" {
			vars[prefix+"_SERVICE_PORT_"+envVarName(p.Name)] = port
		}
		proto := string(p.Protocol)
		if proto == "" {
			proto = string(corev1.ProtocolTCP)
		}
		url := strings.ToLower(proto) + "://" + net.JoinHostPort(ip, port)
		if i == 0 {
			vars[prefix+"_PORT"] = url
		}
		portPrefix := prefix + "_PORT_" + port + "_" + strings.ToUpper(proto)
		vars[portPrefix] = url
		vars[portPrefix+"_PROTO"] = strings.ToLower(proto)
		vars[portPrefix+"_PORT"] = port
		vars[portPrefix+"_ADDR"] = ip
	}
}

// envVarName turns a service or port name into a variable name part.
func envVarName(s string) string {
	return strings.ToUpper(strings.ReplaceAll(s, "-", "_"))
}

// fieldRefValue returns the value of an env fieldRef (upstream
// podFieldSelectorRuntimeValue). podIPs and hostIPs are primary first.
func fieldRefValue(pod *corev1.Pod, ref *corev1.ObjectFieldSelector, podIPs, hostIPs []string) (string, error) {
	if v := ref.APIVersion; v != "" && v != "v1" {
		return "", fmt.Errorf("unsupported pod version: %s", v)
	}
	path := ref.FieldPath
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "metadata.labels":
		return formatMap(pod.Labels), nil
	case "metadata.annotations":
		return formatMap(pod.Annotations), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.hostIP", "status.hostIPs":
		if len(hostIPs) == 0 {
			return "", fmt.Errorf("host IPs are not known")
		}
		if path == "status.hostIP" {
			return hostIPs[0], nil
		}
		return strings.Join(hostIPs, ","), nil
	case "status.podIP":
		if len(podIPs) == 0 {
			return "", nil
		}
		return podIPs[0], nil
	case "status.podIPs":
		return strings.Join(podIPs, ","), nil
	}
	if key, ok := fieldSubscript(path, "metadata.labels"); ok {
		return pod.Labels[key], nil
	}
	if key, ok := fieldSubscript(path, "metadata.annotations"); ok {
		return pod.Annotations[key], nil
	}
	return "", fmt.Errorf("unsupported fieldPath: %v", path)
}

// fieldSubscript parses "<prefix>['key']".
func fieldSubscript(path, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(path, prefix+"['")
	if !ok {
		return "", false
	}
	return strings.CutSuffix(rest, "']")
}

// formatMap renders labels or annotations as the downward API does:
// key="value" lines sorted by key.
func formatMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	lines := make([]string, 0, len(keys))
	for _, k := range keys {
		lines = append(lines, fmt.Sprintf("%s=%q", k, m[k]))
	}
	return strings.Join(lines, "\n")
}

// resourceRefValue returns the value of an env resourceFieldRef (upstream
// containerResourceRuntimeValue): the limit or request of the named
// container (c when the reference names none), divided by the divisor and
// rounded up. A cpu, memory, ephemeral-storage or hugepages limit the
// container does not set is the node's allocatable.
func resourceRefValue(pod *corev1.Pod, c *corev1.Container, ref *corev1.ResourceFieldSelector, allocatable corev1.ResourceList) (string, error) {
	if ref.ContainerName != "" {
		if c = podContainer(pod, ref.ContainerName); c == nil {
			return "", fmt.Errorf("container %s not found", ref.ContainerName)
		}
	}
	kind, rest, _ := strings.Cut(ref.Resource, ".")
	name := corev1.ResourceName(rest)
	cpu, binary := name == corev1.ResourceCPU, name == corev1.ResourceMemory ||
		name == corev1.ResourceEphemeralStorage || strings.HasPrefix(rest, corev1.ResourceHugePagesPrefix)
	if (kind != "limits" && kind != "requests") || (!cpu && !binary) {
		return "", fmt.Errorf("unsupported container resource : %v", ref.Resource)
	}
	q, set := c.Resources.Requests[name]
	if kind == "limits" {
		if q, set = c.Resources.Limits[name]; !set {
			q = allocatable[name]
		}
	}
	divisor := ref.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	if cpu {
		return strconv.FormatInt(int64(math.Ceil(float64(q.MilliValue())/float64(divisor.MilliValue()))), 10), nil
	}
	return strconv.FormatInt(int64(math.Ceil(float64(q.Value())/float64(divisor.Value()))), 10), nil
}

// podContainer returns the container or init container of that name.
func podContainer(pod *corev1.Pod, name string) *corev1.Container {
	for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}
