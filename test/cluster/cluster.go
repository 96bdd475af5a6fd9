package cluster

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

// The components, by binary name.
const (
	Etcd              = "etcd"
	APIServer         = "kube-apiserver"
	ControllerManager = "kube-controller-manager"
	Scheduler         = "kube-scheduler"
	Kubectl           = "kubectl"
	MetricsServer     = "metrics-server"
)

// BinDirEnv names the variable that says where the binaries are.
const BinDirEnv = "BERTH_TOOLS_BIN"

// Options configure Start. The zero value is ready to use.
type Options struct {
	// BinDir holds the binaries. Default: $BERTH_TOOLS_BIN, else
	// <repo>/_output/tools/bin.
	BinDir string
	// TempDir is where the cluster's directory is made. Default: os.TempDir().
	TempDir string
	// NodeNames get a node kubeconfig at start; NodeKubeconfig issues
	// more on demand.
	NodeNames []string
	// StartTimeout bounds the wait for each component to be healthy.
	// Default: 2 minutes.
	StartTimeout time.Duration
	// KeepDir leaves the directory (certificates, etcd data, logs) after Stop.
	KeepDir bool
	// AuditLog makes kube-apiserver log every request's metadata (user,
	// user agent, verb, resource) to AuditLogPath, one JSON event a line.
	AuditLog bool
	// VerifyKubelets makes kube-apiserver verify kubelets' serving
	// certificates against the cluster CA (--kubelet-certificate-authority),
	// which signs the kubelet-serving CSRs: for kubelets with
	// serverTLSBootstrap only.
	VerifyKubelets bool
	// SigningDuration is kube-controller-manager's --cluster-signing-duration,
	// the life of the certificates it signs; 0 keeps its default (a year).
	SigningDuration time.Duration
	// MetricsServer starts metrics-server (tools/metrics) once the control
	// plane is up and registers it as the v1beta1.metrics.k8s.io
	// APIService, for `kubectl top`; see metricsserver.go.
	MetricsServer bool
}

// Cluster is a running control plane. Safe for concurrent use.
type Cluster struct {
	binDir  string
	layout  Layout
	timeout time.Duration
	keepDir bool
	audit   bool
	opts    Options
	pki     pki
	admin   *http.Client // trusts the CA, presents the admin certificate

	bootMu sync.Mutex // serialises BootstrapKubeconfig

	mu      sync.Mutex          // guards the fields below
	procs   map[string]*process // running components, by name
	nodes   map[string]string   // node name -> kubeconfig path
	stopped bool
}

// Start starts etcd, kube-apiserver, kube-controller-manager and
// kube-scheduler on loopback and returns once each is healthy. On error,
// everything it started is stopped again.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	binDir, err := ResolveBinDir(opts.BinDir)
	if err != nil {
		return nil, err
	}
	if err := CheckBinaries(binDir, opts.binaries()...); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(opts.TempDir, "berth-cluster-")
	if err != nil {
		return nil, fmt.Errorf("make cluster directory: %w", err)
	}
	c := &Cluster{
		binDir:  binDir,
		layout:  Layout{Dir: dir},
		timeout: opts.StartTimeout,
		keepDir: opts.KeepDir,
		audit:   opts.AuditLog,
		opts:    opts,
		procs:   map[string]*process{},
		nodes:   map[string]string{},
	}
	if c.timeout <= 0 {
		c.timeout = 2 * time.Minute
	}
	if err := c.start(ctx, opts.NodeNames); err != nil {
		if stopErr := c.Stop(); stopErr != nil {
			err = errors.Join(err, stopErr)
		}
		return nil, fmt.Errorf("start cluster in %s: %w", dir, err)
	}
	return c, nil
}

func (c *Cluster) start(ctx context.Context, nodeNames []string) error {
	ports, err := freePorts(11)
	if err != nil {
		return err
	}
	c.layout.Ports = Ports{EtcdClient: ports[0], EtcdPeer: ports[1], APIServer: ports[2],
		ControllerManager: ports[3], Scheduler: ports[4], MetricsServer: ports[5],
		KubeProxyHealthz: ports[6], KubeProxyMetrics: ports[7], DNSHealth: ports[8], DNSReady: ports[9],
		Provisioner: ports[10]}
	ca, err := NewCA(rand.Reader, time.Now(), "berth-dev-ca")
	if err != nil {
		return err
	}
	if c.pki, err = writePKI(rand.Reader, ca, c.layout); err != nil {
		return err
	}
	if c.audit {
		if err := writeFile(c.layout.Path(auditPolicyFile), []byte(auditPolicy)); err != nil {
			return err
		}
	}
	if c.admin, err = healthClient(ca.KeyPair().CertPEM, &c.pki.admin); err != nil {
		return err
	}
	for _, name := range nodeNames {
		if _, err := c.NodeKubeconfig(name); err != nil {
			return err
		}
	}
	etcdClient, err := healthClient(ca.KeyPair().CertPEM, &c.pki.etcdClient)
	if err != nil {
		return err
	}
	anonymous, err := healthClient(ca.KeyPair().CertPEM, nil)
	if err != nil {
		return err
	}
	l := c.layout
	steps := []struct {
		name   string
		args   []string
		client *http.Client
		url    string
	}{
		{Etcd, EtcdArgs(l), etcdClient, l.EtcdURL() + "/health"},
		{APIServer, c.apiServerArgs(), c.admin, l.APIServerURL() + "/readyz"},
		{ControllerManager, c.controllerManagerArgs(), anonymous, httpsURL(l.Ports.ControllerManager) + "/healthz"},
		{Scheduler, SchedulerArgs(l), anonymous, httpsURL(l.Ports.Scheduler) + "/healthz"},
	}
	for _, s := range steps {
		if err := c.startComponent(ctx, s.name, s.args, s.client, s.url); err != nil {
			return err
		}
	}
	if c.opts.MetricsServer {
		return c.startMetricsServer(ctx, anonymous)
	}
	return nil
}

// startComponent starts one component and waits for its health endpoint.
func (c *Cluster) startComponent(ctx context.Context, name string, args []string, client *http.Client, url string) error {
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return errors.New("cluster is stopped")
	}
	if old, ok := c.procs[name]; ok {
		if exited, _ := old.exited(); !exited {
			c.mu.Unlock()
			return fmt.Errorf("start %s: already running", name)
		}
	}
	p, err := startProcess(name, filepath.Join(c.binDir, name), args, c.LogPath(name))
	if err != nil {
		c.mu.Unlock()
		return err
	}
	c.procs[name] = p
	c.mu.Unlock()

	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	return waitHealthy(ctx, p, client, url)
}

// stopComponent stops one component if it runs: gracefully (SIGTERM, then
// SIGKILL after stopGrace), or at once with SIGKILL when kill is set.
func (c *Cluster) stopComponent(name string, kill bool) {
	c.mu.Lock()
	p := c.procs[name]
	delete(c.procs, name)
	c.mu.Unlock()
	switch {
	case p == nil:
	case kill:
		p.kill()
	default:
		p.stop()
	}
}

// Stop stops every component, newest first; when kube-proxy ran, it then
// removes its rules from the host (`kube-proxy --cleanup`). It removes the
// cluster's directory unless Options.KeepDir. It is idempotent.
//
// A cluster whose directory goes is killed (SIGKILL), not shut down: its
// state is thrown away, and kube-apiserver's graceful shutdown alone took
// 1.1 s of every test's end (37 clusters in test/e2e). One kept for a
// look afterwards is stopped gracefully, so that etcd (which runs without
// fsync) leaves its data whole.
func (c *Cluster) Stop() error {
	c.mu.Lock()
	already := c.stopped
	c.stopped = true
	_, ranKubeProxy := c.procs[KubeProxy]
	c.mu.Unlock()
	if already {
		return nil
	}
	for _, name := range []string{CoreDNS, KubeProxy, LocalProvisioner, MetricsServer, Scheduler, ControllerManager, APIServer, Etcd} {
		c.stopComponent(name, !c.keepDir)
	}
	err := c.cleanupNetwork(ranKubeProxy)
	if c.keepDir {
		return err
	}
	if rmErr := os.RemoveAll(c.layout.Dir); rmErr != nil {
		err = errors.Join(err, fmt.Errorf("remove cluster directory %q: %w", c.layout.Dir, rmErr))
	}
	return err
}

// StopAPIServer stops kube-apiserver gracefully (SIGTERM; SIGKILL if it is
// not gone after 10 s, which with open watches it often is not); etcd and
// the rest keep running.
func (c *Cluster) StopAPIServer() { c.stopComponent(APIServer, false) }

// StartAPIServer starts kube-apiserver again, on the same port with the same
// etcd, and waits until it is ready.
func (c *Cluster) StartAPIServer(ctx context.Context) error {
	return c.startComponent(ctx, APIServer, c.apiServerArgs(), c.admin, c.layout.APIServerURL()+"/readyz")
}

// apiServerArgs is APIServerArgs plus the audit flags when asked for.
func (c *Cluster) apiServerArgs() []string {
	args := APIServerArgs(c.layout)
	if c.opts.VerifyKubelets {
		args = append(args, "--kubelet-certificate-authority="+c.layout.PKI("ca.crt"))
	}
	if c.audit {
		args = append(args, "--audit-policy-file="+c.layout.Path(auditPolicyFile), "--audit-log-path="+c.AuditLogPath(),
			"--audit-log-format=json", "--audit-log-mode=blocking")
	}
	return args
}

// controllerManagerArgs is ControllerManagerArgs plus the signing
// duration when asked for.
func (c *Cluster) controllerManagerArgs() []string {
	args := ControllerManagerArgs(c.layout)
	if d := c.opts.SigningDuration; d > 0 {
		args = append(args, "--cluster-signing-duration="+d.String())
	}
	return args
}

// AuditLogPath is the audit log's path (written only with Options.AuditLog).
func (c *Cluster) AuditLogPath() string { return c.layout.Path("audit.log") }

// RestartAPIServer kills kube-apiserver (SIGKILL, as a crash would) and
// starts it again on the same port with the same etcd.
func (c *Cluster) RestartAPIServer(ctx context.Context) error {
	c.stopComponent(APIServer, true)
	return c.StartAPIServer(ctx)
}

// nodeNameRE is a lower-case RFC 1123 subdomain, what a Node name must be.
var nodeNameRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)

// NodeKubeconfig returns the path of a kubeconfig for the kubelet of
// nodeName (user system:node:<nodeName>, group system:nodes), issuing its
// certificate on first use.
func (c *Cluster) NodeKubeconfig(nodeName string) (string, error) {
	if len(nodeName) > 253 || !nodeNameRE.MatchString(nodeName) {
		return "", fmt.Errorf("node kubeconfig %q: not a valid node name (lower-case RFC 1123 subdomain)", nodeName)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if path, ok := c.nodes[nodeName]; ok {
		return path, nil
	}
	path, err := writeNodeKubeconfig(c.pki.ca, c.layout, nodeName)
	if err != nil {
		return "", fmt.Errorf("node kubeconfig %q: %w", nodeName, err)
	}
	c.nodes[nodeName] = path
	return path, nil
}

// IssueClientCert issues a client certificate signed by the cluster CA for
// user in groups: an identity both the API server and a kubelet started
// with the cluster CA as its client CA accept.
func (c *Cluster) IssueClientCert(user string, groups ...string) (KeyPair, error) {
	kp, err := c.pki.ca.Issue(ClientSpec(user, groups...))
	if err != nil {
		return KeyPair{}, fmt.Errorf("issue client certificate %q: %w", user, err)
	}
	return kp, nil
}

// Kubectl runs kubectl as the admin and returns its standard output; on
// failure the error carries its standard error.
func (c *Cluster) Kubectl(ctx context.Context, args ...string) (string, error) {
	return c.KubectlAs(ctx, c.AdminKubeconfig(), args...)
}

// KubectlAs runs kubectl with the given kubeconfig.
func (c *Cluster) KubectlAs(ctx context.Context, kubeconfig string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, c.KubectlPath(), append([]string{"--kubeconfig", kubeconfig}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("run kubectl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// Dir is the cluster's directory: certificates under pki/, kubeconfigs,
// etcd's data and one <component>.log per component.
func (c *Cluster) Dir() string { return c.layout.Dir }

// Server is the API server's URL.
func (c *Cluster) Server() string { return c.layout.APIServerURL() }

// CAFile is the path of the cluster CA's certificate.
func (c *Cluster) CAFile() string { return c.layout.PKI("ca.crt") }

// AdminKubeconfig is the path of the admin's (system:masters) kubeconfig.
func (c *Cluster) AdminKubeconfig() string { return c.layout.Path("admin.kubeconfig") }

// KubectlPath is the path of the kubectl binary.
func (c *Cluster) KubectlPath() string { return filepath.Join(c.binDir, Kubectl) }

// LogPath is the path of a component's log file.
func (c *Cluster) LogPath(component string) string { return c.layout.Path(component + ".log") }

// freePorts returns n distinct free loopback ports, held open together
// while chosen so that none is returned twice.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", loopback+":0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
