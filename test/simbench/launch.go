package simbench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/berthk8s/berth/test/cluster"
)

// The node capacity every simulator's nodes get: berth simulate's
// defaults, which kwok's Nodes (the harness writes their status) copy.
const (
	nodeCPU    = "8"
	nodeMemory = "32Gi"
	nodePods   = "110"
)

// kwokLeaseSeconds is kwok's --node-lease-duration-seconds: the kubelet's
// default of 40 s, renewed every 10 s as berth's and the hollow nodes'
// Leases are, so that the API requests compare like for like (kwokctl's
// own default is 40 s times its heartbeat factor of 5).
const kwokLeaseSeconds = 40

// kwokSelector is the annotation kwok manages Nodes by, as kwok's
// documentation and kwokctl set it.
const kwokSelector = "kwok.x-k8s.io/node=fake"

// runEnv is what a launcher gets: the run's cluster and directory.
type runEnv struct {
	cfg     Config
	cluster *cluster.Cluster
	client  kubernetes.Interface // the harness's own, as the admin
	dir     string
	nodes   int
}

// kubeconfigFor writes a kubeconfig for user in system:masters.
func (e runEnv) kubeconfigFor(user string) (string, error) {
	kp, err := e.cluster.IssueClientCert(user, "system:masters")
	if err != nil {
		return "", err
	}
	ca, err := os.ReadFile(e.cluster.CAFile())
	if err != nil {
		return "", err
	}
	path := filepath.Join(e.dir, user+".kubeconfig")
	return path, os.WriteFile(path, cluster.Kubeconfig(e.cluster.Server(), ca, user, kp), 0o600)
}

// launch starts sim's processes into procs.
func launch(ctx context.Context, sim string, env runEnv, procs *procSet) error {
	switch sim {
	case Kwok:
		return launchKwok(ctx, env, procs)
	case Kubemark:
		return launchKubemark(ctx, env, procs)
	}
	return launchBerth(env, procs)
}

// launchBerth starts berth simulate with env.nodes nodes.
func launchBerth(env runEnv, procs *procSet) error {
	kc, err := env.kubeconfigFor(berthUser)
	if err != nil {
		return err
	}
	args := []string{"simulate", "--kubeconfig", kc, "--nodes", strconv.Itoa(env.nodes),
		"--node-name-prefix", nodePrefix(Berth), "--root-dir", filepath.Join(env.dir, "berth-root"),
		"--cpu", nodeCPU, "--memory", nodeMemory, "--max-pods", nodePods}
	c, err := startChild("berth simulate", env.cfg.BerthBinary, append(args, env.cfg.BerthArgs...), nil,
		filepath.Join(env.dir, "berth.log"))
	if err != nil {
		return err
	}
	procs.add(c)
	return nil
}

// launchKwok writes kwok's default Stages (kwok-stages), starts kwok on
// the Nodes with kwok's annotation and creates env.nodes of them.
func launchKwok(ctx context.Context, env runEnv, procs *procSet) error {
	kc, err := env.kubeconfigFor(kwokUser)
	if err != nil {
		return err
	}
	stages, err := exec.CommandContext(ctx, filepath.Join(env.cfg.BinDir, "kwok-stages")).Output()
	if err != nil {
		return fmt.Errorf("run kwok-stages: %w", err)
	}
	conf := filepath.Join(env.dir, "kwok.yaml")
	home := filepath.Join(env.dir, "kwok-home") // kwok reads ~/.kwok/kwok.yaml when there is one
	if err := os.WriteFile(conf, stages, 0o644); err != nil {
		return err
	}
	if err := os.MkdirAll(home, 0o755); err != nil {
		return err
	}
	args := []string{"--kubeconfig=" + kc, "--config=" + conf, "--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=" + kwokSelector,
		"--node-lease-duration-seconds=" + strconv.Itoa(kwokLeaseSeconds), "--server-address=127.0.0.1:0"}
	c, err := startChild("kwok", filepath.Join(env.cfg.BinDir, "kwok"), args, []string{"HOME=" + home},
		filepath.Join(env.dir, "kwok.log"))
	if err != nil {
		return err
	}
	procs.add(c)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for i := range env.nodes {
		g.Go(func() error {
			_, err := env.client.CoreV1().Nodes().Create(gctx, kwokNode(nodeName(Kwok, i)), metav1.CreateOptions{})
			return err
		})
	}
	return g.Wait()
}

// kwokNode is a Node for kwok to manage, as kwok's documentation writes
// one (without its NoSchedule taint: the harness binds its pods itself).
func kwokNode(name string) *corev1.Node {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(nodeCPU),
		corev1.ResourceMemory: resource.MustParse(nodeMemory),
		corev1.ResourcePods:   resource.MustParse(nodePods),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
			Labels: map[string]string{"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
				"kubernetes.io/arch": "amd64", "type": "kwok"},
		},
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
	}
}

// launchKubemark starts one hollow node (kubemark --morph=kubelet) a
// node, each with its node's kubeconfig, as upstream's hollow-node
// template runs them, on a kubelet port of its own and with the fake
// image service (upstream's default is the host's containerd, which the
// bench does not touch). It stops starting when ctx ends.
func launchKubemark(ctx context.Context, env runEnv, procs *procSet) error {
	ports, err := freePorts(env.nodes)
	if err != nil {
		return err
	}
	bin := filepath.Join(env.cfg.BinDir, "kubemark")
	for i := range env.nodes {
		if err := context.Cause(ctx); err != nil {
			return err
		}
		name := nodeName(Kubemark, i)
		kc, err := env.cluster.NodeKubeconfig(name)
		if err != nil {
			return err
		}
		args := []string{"--morph=kubelet", "--name=" + name, "--kubeconfig=" + kc,
			"--kubelet-port=" + strconv.Itoa(ports[i]), "--kubelet-read-only-port=0",
			"--use-host-image-service=false", "--max-pods=" + nodePods}
		c, err := startChild(name, bin, args, nil, filepath.Join(env.dir, name+".log"))
		if err != nil {
			return err
		}
		procs.add(c)
	}
	return nil
}

// hollowRootRE finds the root directory a hollow kubelet made for itself
// (under /tmp, whatever TMPDIR says) in its log.
var hollowRootRE = regexp.MustCompile(`Using (/tmp/hollow-kubelet\.[0-9]+) as root dir for hollow-kubelet`)

// hollowRoot returns the root directory a hollow kubelet's log names,
// or "". It is pure.
func hollowRoot(log []byte) string {
	if m := hollowRootRE.FindSubmatch(log); m != nil {
		return string(m[1])
	}
	return ""
}

// removeHollowRoots removes the root directories the stopped hollow
// kubelets made.
func removeHollowRoots(children []*child) error {
	var errs []error
	for _, c := range children {
		b, err := os.ReadFile(c.logPath)
		if err != nil {
			continue
		}
		if dir := hollowRoot(b); dir != "" {
			if err := os.RemoveAll(dir); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// freePorts returns n distinct free ports, held open together
// while chosen so that none is returned twice.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", ":0") // the hollow kubelet binds every address
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
