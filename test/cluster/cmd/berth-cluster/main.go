// Command berth-cluster runs berth's development cluster: the control plane
// of package cluster on loopback and, with --berth, a berth node joined to
// it. It prints the kubectl command line to use, and on Ctrl-C or SIGTERM
// stops berth, then the control plane. With --berth it also runs the local
// volume provisioner and creates the default StorageClass (--storage,
// cluster.StartStorage). `make cluster` runs it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/berthk8s/berth/test/cluster"
)

type options struct {
	berth         string
	nodeName      string
	staticPodPath string
	criEndpoint   string
	binDir        string
	keep          bool
	// tlsBootstrap joins berth with a bootstrap token, as kubeadm join;
	// false gives it a system:node client certificate instead.
	tlsBootstrap bool
	// network runs kube-proxy and CoreDNS once the node is registered,
	// and gives the node cluster.ClusterDNSIP as its clusterDNS.
	network bool
	// storage runs the local volume provisioner for the node and creates
	// the default StorageClass.
	storage   bool
	berthArgs []string
}

func main() {
	if err := run(parseFlags()); err != nil {
		fmt.Fprintln(os.Stderr, "berth-cluster:", err)
		os.Exit(1)
	}
}

func parseFlags() options {
	var o options
	hostname, _ := os.Hostname()
	flag.StringVar(&o.berth, "berth", "", "berth binary to run as a node of the cluster; empty: the control plane alone")
	flag.StringVar(&o.nodeName, "node-name", strings.ToLower(hostname), "the berth node's name (its kubeconfig is for system:node:<name>)")
	flag.StringVar(&o.staticPodPath, "static-pod-path", "examples/static-pods", "staticPodPath of the berth node")
	flag.StringVar(&o.criEndpoint, "cri-endpoint", "unix:///run/containerd/containerd.sock", "containerRuntimeEndpoint of the berth node")
	flag.StringVar(&o.binDir, "bin-dir", "", "directory of the control plane binaries (default $"+cluster.BinDirEnv+", else <repo>/_output/tools/bin)")
	flag.BoolVar(&o.tlsBootstrap, "tls-bootstrap", true, "join berth through TLS bootstrap (a bootstrap token, rotateCertificates), as kubeadm join; false: a kubeconfig with a system:node client certificate")
	flag.BoolVar(&o.network, "network", false, "once the node is registered, run kube-proxy (iptables mode; needs root) and CoreDNS for Services and cluster DNS, and give the node clusterDNS "+cluster.ClusterDNSIP)
	flag.BoolVar(&o.storage, "storage", true, "with --berth, run the local volume provisioner (tools/provisioner) for the node, its volumes under <cluster dir>/volumes, and create the default StorageClass "+cluster.DefaultStorageClass+" (WaitForFirstConsumer, reclaimPolicy Delete)")
	flag.BoolVar(&o.keep, "keep", false, "keep the cluster's directory (certificates, etcd data, logs) after stopping")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: berth-cluster [flags] [-- berth flags...]\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	o.berthArgs = flag.Args()
	return o
}

func run(o options) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	staticPods, err := filepath.Abs(o.staticPodPath)
	if err != nil {
		return fmt.Errorf("resolve static pod path %q: %w", o.staticPodPath, err)
	}
	fmt.Println("berth-cluster: starting etcd, kube-apiserver, kube-controller-manager and kube-scheduler on 127.0.0.1 ...")
	start := time.Now()
	c, err := cluster.Start(ctx, cluster.Options{BinDir: o.binDir, KeepDir: o.keep})
	if err != nil {
		return err
	}
	defer func() {
		fmt.Println("berth-cluster: stopping the control plane")
		if err := c.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "berth-cluster:", err)
		}
	}()
	credArgs, nodeKubeconfig, err := nodeCredentials(ctx, c, o)
	if err != nil {
		return err
	}
	kubeletConfig := filepath.Join(c.Dir(), "kubelet-config.yaml")
	node := nodeConfig{staticPodPath: staticPods, criEndpoint: o.criEndpoint, clientCAFile: c.CAFile(), rotate: o.tlsBootstrap, clusterDNS: o.network}
	if err := os.WriteFile(kubeletConfig, kubeletConfigYAML(node), 0o644); err != nil {
		return fmt.Errorf("write kubelet configuration: %w", err)
	}
	printHints(c, time.Since(start), o.nodeName, nodeKubeconfig)

	if o.berth == "" {
		if o.network {
			return errors.New("--network needs a node: give --berth")
		}
		fmt.Println("berth-cluster: no --berth given: the control plane alone; Ctrl-C stops it")
		<-ctx.Done()
		return nil
	}
	if o.storage {
		if err := c.StartStorage(ctx, o.nodeName); err != nil {
			return fmt.Errorf("start the local volume provisioner: %w", err)
		}
		fmt.Printf("berth-cluster: storage ready: StorageClass %s (default) by %s, volumes under %s\n", cluster.DefaultStorageClass, cluster.LocalProvisioner, c.VolumesDir())
	}
	args := append(append(credArgs, "--config="+kubeletConfig,
		"--hostname-override="+o.nodeName, "--cert-dir="+filepath.Join(c.Dir(), "kubelet-pki")), o.berthArgs...)
	fmt.Printf("berth-cluster: running %s %s\n\n", o.berth, strings.Join(args, " "))
	b, err := startBerth(o.berth, args)
	if err != nil {
		return err
	}
	if o.network {
		if err := startNetwork(ctx, c, b, o.nodeName); err != nil {
			b.stop()
			return err
		}
	}
	return b.wait(ctx)
}

// startNetwork starts kube-proxy and CoreDNS once the node is registered;
// it gives up when berth exits first.
func startNetwork(ctx context.Context, c *cluster.Cluster, b *berthProcess, nodeName string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-b.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	if err := c.StartNetwork(ctx, nodeName); err != nil {
		return fmt.Errorf("start kube-proxy and CoreDNS: %w", err)
	}
	// hack/conformance.sh waits for this line.
	fmt.Printf("berth-cluster: network ready: kube-proxy (iptables) and CoreDNS, Service kube-system/kube-dns at %s\n", cluster.ClusterDNSIP)
	return nil
}

// nodeCredentials returns berth's credential flags and the node's
// kubeconfig: with TLS bootstrap a bootstrap kubeconfig and the path berth
// writes its own kubeconfig to once its certificate is issued; without,
// a kubeconfig with a system:node certificate the cluster CA issues.
func nodeCredentials(ctx context.Context, c *cluster.Cluster, o options) (args []string, kubeconfig string, err error) {
	if !o.tlsBootstrap {
		kubeconfig, err = c.NodeKubeconfig(o.nodeName)
		return []string{"--kubeconfig=" + kubeconfig}, kubeconfig, err
	}
	boot, err := c.BootstrapKubeconfig(ctx)
	if err != nil {
		return nil, "", err
	}
	kubeconfig = filepath.Join(c.Dir(), "kubelet.kubeconfig")
	return []string{"--bootstrap-kubeconfig=" + boot, "--kubeconfig=" + kubeconfig}, kubeconfig, nil
}

// berthProcess is the running node. done is closed, and err set, when it
// has exited.
type berthProcess struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error // the result of Wait; read only after done is closed
}

// startBerth starts berth in a process group of its own.
func startBerth(bin string, args []string) (*berthProcess, error) {
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start berth: %w", err)
	}
	b := &berthProcess{cmd: cmd, done: make(chan struct{})}
	go func() {
		b.err = cmd.Wait()
		close(b.done)
	}()
	return b, nil
}

// wait waits until berth exits or ctx ends; then it stops berth.
func (b *berthProcess) wait(ctx context.Context) error {
	select {
	case <-b.done:
		if b.err != nil {
			return fmt.Errorf("berth exited: %w", b.err)
		}
		return errors.New("berth exited")
	case <-ctx.Done():
	}
	b.stop()
	return nil
}

// stop sends SIGTERM, SIGKILL after 30 s, and waits for berth to exit.
func (b *berthProcess) stop() {
	select {
	case <-b.done:
		return
	default:
	}
	fmt.Println("\nberth-cluster: stopping berth")
	_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-b.done:
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
		<-b.done
	}
}

func printHints(c *cluster.Cluster, took time.Duration, nodeName, nodeKubeconfig string) {
	kubectl := c.KubectlPath()
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, kubectl); err == nil && !strings.HasPrefix(rel, "..") {
			kubectl = rel
		}
	}
	fmt.Printf(`
berth-cluster: control plane ready in %s at %s
  directory:  %s (logs: *.log, certificates: pki/)

  kubectl as the admin:
    %s --kubeconfig %s get nodes
  or:
    export KUBECONFIG=%s

  kubectl as the node %s (system:node:%s, what berth uses; with TLS
  bootstrap berth writes it once its client certificate is issued):
    %s --kubeconfig %s auth can-i --list

`, took.Round(100*time.Millisecond), c.Server(), c.Dir(),
		kubectl, c.AdminKubeconfig(), c.AdminKubeconfig(),
		nodeName, nodeName, kubectl, nodeKubeconfig)
}

// kubeletConfigYAML is the berth node's KubeletConfiguration in cluster
// mode. The kubelet API listens on every address (the API server dials the
// node's IP for kubectl logs and exec) and accepts the cluster CA's client
// certificates and, through the API server, tokens and RBAC, as a kubeadm
// node does; with TLS bootstrap the client certificate is rotated, as
// kubeadm configures it. With clusterDNS, pods get the kube-dns Service
// (cluster.ClusterDNSIP) and cluster.ClusterDomain, as kubeadm's node.
func kubeletConfigYAML(n nodeConfig) []byte {
	dns := ""
	if n.clusterDNS {
		dns = fmt.Sprintf("clusterDNS: [%s]\nclusterDomain: %s\n", cluster.ClusterDNSIP, cluster.ClusterDomain)
	}
	return []byte(fmt.Sprintf(`# Written by berth-cluster: berth as a node of the development cluster.
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
rotateCertificates: %t
staticPodPath: %s
fileCheckFrequency: 5s
syncFrequency: 1m
containerRuntimeEndpoint: %s
runtimeRequestTimeout: 2m
cgroupDriver: cgroupfs
failCgroupV1: false
# A development cluster on a shared host: leave its iptables alone.
makeIPTablesUtilChains: false
# The example images are built locally and no registry can give them back:
# image GC by disk usage never removes them.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
# The machine's disk is shared: thresholds its fill cannot cross by
# itself (cluster.SharedHostEviction).
%saddress: 0.0.0.0
port: 10250
readOnlyPort: 10255
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: %s
authorization:
  mode: Webhook
logging:
  verbosity: 2
%s`, n.rotate, n.staticPodPath, n.criEndpoint, cluster.SharedHostEviction, n.clientCAFile, dns))
}

// nodeConfig is what the node's KubeletConfiguration says beyond the fixed
// part: clusterDNS gives it the cluster's DNS Service (--network).
type nodeConfig struct {
	staticPodPath, criEndpoint, clientCAFile string
	rotate, clusterDNS                       bool
}
