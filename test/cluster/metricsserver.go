package cluster

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"time"
)

// metrics-server behind the API server's aggregation layer, as upstream's
// manifests (manifests/base in sigs.k8s.io/metrics-server) install it, but
// as a process on loopback instead of a pod:
//
//   - its identity is a client certificate (MetricsServerUser) bound to the
//     roles upstream's rbac.yaml binds to its service account;
//   - the APIService v1beta1.metrics.k8s.io points at an ExternalName
//     Service whose name is "localhost". The API server's default
//     (non-endpoint) routing sends a request for an ExternalName Service to
//     that name and the APIService's port, so no Service network and no
//     kube-proxy are needed. (--enable-aggregator-routing would not do:
//     it routes to EndpointSlice addresses, and their validation refuses
//     loopback addresses, as Endpoints' does.)
//   - the aggregator verifies metrics-server's serving certificate for
//     metrics-server.kube-system.svc against the APIService's caBundle, the
//     cluster CA, instead of upstream's insecureSkipTLSVerify.
const (
	// MetricsServerUser is metrics-server's user name, towards the API
	// server and towards kubelets.
	MetricsServerUser = "metrics-server"
	// metricsServerService is the Service (kube-system) the APIService
	// names; the aggregator verifies the serving certificate for
	// <name>.<namespace>.svc.
	metricsServerService = "metrics-server"
	// MetricResolution is metrics-server's --metric-resolution, the least
	// it accepts: it scrapes every node this often, and reports CPU from
	// two scrapes.
	MetricResolution = 10 * time.Second
	// metricsAccessFile and metricsAPIServiceFile hold the two manifests.
	metricsAccessFile     = "metrics-server-access.yaml"
	metricsAPIServiceFile = "metrics-server-apiservice.yaml"
)

// binaries are the optional binaries the options ask for.
func (o Options) binaries() []string {
	if o.MetricsServer {
		return []string{MetricsServer}
	}
	return nil
}

// MetricsServerServingSpec is metrics-server's serving certificate: the
// name the aggregator verifies (the Service's in-cluster name) and
// loopback.
func MetricsServerServingSpec() CertSpec {
	spec := LoopbackServingSpec(MetricsServer)
	spec.DNSNames = append(spec.DNSNames, metricsServerService+".kube-system.svc")
	return spec
}

// MetricsServerArgs is metrics-server's command line: its kubeconfig for
// everything, serving on loopback with the cluster CA for client
// certificates, kubelets scraped at their InternalIP and the port their
// Node status reports, every MetricResolution. With verifyKubelets the
// kubelets' serving certificates are verified against the cluster CA (which
// signs them under serverTLSBootstrap); without it they are self-signed and
// not verified, as the API server does not verify them either.
func MetricsServerArgs(l Layout, verifyKubelets bool) []string {
	args := append(servingArgs(l, "metrics-server", l.Ports.MetricsServer),
		"--kubelet-preferred-address-types=InternalIP",
		"--kubelet-use-node-status-port=true",
		"--metric-resolution="+MetricResolution.String(),
		// metrics-server wants the timeout under 90% of the resolution.
		"--kubelet-request-timeout=5s",
	)
	if verifyKubelets {
		return append(args, "--kubelet-certificate-authority="+l.PKI("ca.crt"))
	}
	return append(args, "--kubelet-insecure-tls=true")
}

// MetricsServerAccessManifest is what metrics-server needs before it
// starts: the RBAC of upstream's rbac.yaml, granted to MetricsServerUser
// (read the front proxy's CA from extension-apiserver-authentication,
// delegate authentication and authorization, read nodes and pods and the
// kubelets' metrics), the aggregated reader role, and the Service the
// APIService names.
func MetricsServerAccessManifest() string {
	return fmt.Sprintf(`apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: system:aggregated-metrics-reader
  labels:
    rbac.authorization.k8s.io/aggregate-to-view: "true"
    rbac.authorization.k8s.io/aggregate-to-edit: "true"
    rbac.authorization.k8s.io/aggregate-to-admin: "true"
rules:
- apiGroups: ["metrics.k8s.io"]
  resources: ["pods", "nodes"]
  verbs: ["get", "list", "watch"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: system:metrics-server
rules:
- apiGroups: [""]
  resources: ["nodes/metrics"]
  verbs: ["get"]
- apiGroups: [""]
  resources: ["pods", "nodes"]
  verbs: ["get", "list", "watch"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: metrics-server-auth-reader
  namespace: kube-system
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: extension-apiserver-authentication-reader
subjects:
- apiGroup: rbac.authorization.k8s.io
  kind: User
  name: %[1]s
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: metrics-server:system:auth-delegator
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: system:auth-delegator
subjects:
- apiGroup: rbac.authorization.k8s.io
  kind: User
  name: %[1]s
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: system:metrics-server
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: system:metrics-server
subjects:
- apiGroup: rbac.authorization.k8s.io
  kind: User
  name: %[1]s
---
apiVersion: v1
kind: Service
metadata:
  name: %[2]s
  namespace: kube-system
spec:
  type: ExternalName
  externalName: localhost
`, MetricsServerUser, metricsServerService)
}

// MetricsServerAPIServiceManifest registers metrics-server, listening on
// port, as metrics.k8s.io/v1beta1, its certificate verified against caPEM.
func MetricsServerAPIServiceManifest(port int, caPEM []byte) string {
	return fmt.Sprintf(`apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1beta1.metrics.k8s.io
spec:
  service:
    name: %s
    namespace: kube-system
    port: %d
  group: metrics.k8s.io
  version: v1beta1
  caBundle: %s
  groupPriorityMinimum: 100
  versionPriority: 100
`, metricsServerService, port, base64.StdEncoding.EncodeToString(caPEM))
}

// startMetricsServer issues metrics-server's certificates and kubeconfig,
// creates its RBAC and Service, starts it and waits until it is live, then
// registers the APIService and waits until the API server serves
// metrics.k8s.io through it. The APIService comes last because the
// aggregator backs off exponentially while it cannot reach the server.
func (c *Cluster) startMetricsServer(ctx context.Context, anonymous *http.Client) error {
	l := c.layout
	caPEM := c.pki.ca.KeyPair().CertPEM
	serving, err := c.pki.ca.Issue(MetricsServerServingSpec())
	if err != nil {
		return err
	}
	if err := writePair(l, "metrics-server-serving", serving); err != nil {
		return err
	}
	client, err := c.pki.ca.Issue(ClientSpec(MetricsServerUser))
	if err != nil {
		return err
	}
	if err := writeFile(l.Path("metrics-server.kubeconfig"), Kubeconfig(l.APIServerURL(), caPEM, MetricsServerUser, client)); err != nil {
		return err
	}
	if err := c.apply(ctx, metricsAccessFile, MetricsServerAccessManifest()); err != nil {
		return err
	}
	args := MetricsServerArgs(l, c.opts.VerifyKubelets)
	if err := c.startComponent(ctx, MetricsServer, args, anonymous, httpsURL(l.Ports.MetricsServer)+"/livez"); err != nil {
		return err
	}
	if err := c.apply(ctx, metricsAPIServiceFile, MetricsServerAPIServiceManifest(l.Ports.MetricsServer, caPEM)); err != nil {
		return err
	}
	return c.waitServing(ctx, MetricsServer, c.admin, l.APIServerURL()+"/apis/metrics.k8s.io/v1beta1")
}

// waitServing waits, within the cluster's timeout, until url answers
// through client while the started component name still runs (a second
// check after its own health endpoint: metrics-server's API through the
// aggregator, CoreDNS's readiness).
func (c *Cluster) waitServing(ctx context.Context, name string, client *http.Client, url string) error {
	c.mu.Lock()
	p := c.procs[name]
	c.mu.Unlock()
	if p == nil {
		return fmt.Errorf("wait for %s: stopped", name)
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	return waitHealthy(ctx, p, client, url)
}

// apply writes manifest to the cluster directory as name and applies it.
func (c *Cluster) apply(ctx context.Context, name, manifest string) error {
	path := c.layout.Path(name)
	if err := writeFile(path, []byte(manifest)); err != nil {
		return err
	}
	if _, err := c.Kubectl(ctx, "apply", "-f", path); err != nil {
		return fmt.Errorf("apply %s: %w", name, err)
	}
	return nil
}
