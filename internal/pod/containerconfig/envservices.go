package containerconfig

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/berthk8s/berth/internal/podkit/downward"

	corev1 "k8s.io/api/core/v1"
)

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
	if v, ok := downward.Metadata(pod, path); ok {
		return v, nil
	}
	switch path {
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
	return "", fmt.Errorf("unsupported fieldPath: %v", path)
}
