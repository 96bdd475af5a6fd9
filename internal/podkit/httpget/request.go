package httpget

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/version"
)

// Purpose says who sends a request; it names the User-Agent.
type Purpose string

// The senders, as upstream names them.
const (
	Probe     Purpose = "probe"     // HTTP and gRPC probes
	Lifecycle Purpose = "lifecycle" // httpGet lifecycle hooks
)

// UserAgent is upstream's User-Agent for the purpose:
// "kube-<purpose>/<major>.<minor>" of kubernetesVersion, the Kubernetes
// version berth stands in for (the wiring passes config.KubernetesVersion),
// as upstream derives it from its own version. It fails on a version that
// is not semantic.
func UserAgent(p Purpose, kubernetesVersion string) (string, error) {
	v, err := version.ParseSemantic(kubernetesVersion)
	if err != nil {
		return "", fmt.Errorf("parse kubernetes version %q: %w", kubernetesVersion, err)
	}
	return fmt.Sprintf("kube-%s/%d.%d", p, v.Major(), v.Minor()), nil
}

// NewRequest builds the GET of an httpGet action, as upstream's
// NewRequestForHTTPGetAction: the scheme lower-cased (http when empty);
// the action's host, else podIP; the port by ResolvePort; the path with its
// query as given (one that does not parse is taken literally; the URL gets
// its leading "/"); the action's headers, then userAgent unless they set a
// User-Agent, and "Accept: */*" unless they set an Accept (an empty one
// removes it); a Host header becomes the request's host. Errors are
// upstream's, unwrapped: callers show them to users as upstream does.
func NewRequest(ctx context.Context, a *corev1.HTTPGetAction, c *corev1.Container, podIP, userAgent string) (*http.Request, error) {
	scheme := strings.ToLower(string(a.Scheme))
	if scheme == "" {
		scheme = "http"
	}
	host := a.Host
	if host == "" {
		host = podIP
	}
	port, err := ResolvePort(a.Port, c)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(a.Path)
	if err != nil {
		u = &url.URL{Path: a.Path}
	}
	u.Scheme, u.Host = scheme, net.JoinHostPort(host, strconv.Itoa(port))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	headers := http.Header{}
	for _, h := range a.HTTPHeaders {
		headers.Add(h.Name, h.Value)
	}
	if _, ok := headers["User-Agent"]; !ok {
		headers.Set("User-Agent", userAgent)
	}
	if _, ok := headers["Accept"]; !ok {
		headers.Set("Accept", "*/*")
	} else if headers.Get("Accept") == "" {
		headers.Del("Accept")
	}
	req.Header = headers
	req.Host = headers.Get("Host")
	return req, nil
}

// ResolvePort returns the port an action targets, as upstream's
// ResolveContainerPort: a number, or the containerPort of the container's
// port of that name (a number written as a string is a name, and not
// found); it must be in 1..65535.
func ResolvePort(p intstr.IntOrString, c *corev1.Container) (int, error) {
	port := -1
	switch p.Type {
	case intstr.Int:
		port = p.IntValue()
	case intstr.String:
		found := false
		for _, cp := range c.Ports {
			if cp.Name == p.StrVal {
				port, found = int(cp.ContainerPort), true
				break
			}
		}
		if !found {
			return 0, fmt.Errorf("port %q not found", p.StrVal)
		}
	default:
		return port, fmt.Errorf("intOrString had no kind: %+v", p)
	}
	if port > 0 && port < 65536 {
		return port, nil
	}
	return port, fmt.Errorf("invalid port number: %v", port)
}
