package prober

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// resolvePort returns the port a probe targets: a number, or the name of
// one of the container's ports (its containerPort), or, as upstream's last
// resort, a number written as a string. The port must be in 1..65535.
func resolvePort(p intstr.IntOrString, c *corev1.Container) (int, error) {
	var port int
	switch p.Type {
	case intstr.Int:
		port = p.IntValue()
	case intstr.String:
		named, ok := namedPort(c, p.StrVal)
		if !ok {
			n, err := strconv.Atoi(p.StrVal)
			if err != nil {
				return 0, fmt.Errorf("port %s not found", p.StrVal)
			}
			named = n
		}
		port = named
	default:
		return 0, fmt.Errorf("intOrString had no kind: %+v", p)
	}
	if port <= 0 || port >= 65536 {
		return port, fmt.Errorf("invalid port number: %v", port)
	}
	return port, nil
}

func namedPort(c *corev1.Container, name string) (int, bool) {
	for _, p := range c.Ports {
		if p.Name == name {
			return int(p.ContainerPort), true
		}
	}
	return 0, false
}
