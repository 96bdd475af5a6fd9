package simulate

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/app/simulate"
	"github.com/berthk8s/berth/test/cluster"
)

const manifest = "../../examples/simulate/berth-simulate.yaml"

// TestSimulateDeployment runs examples/simulate as a cluster would, short
// of the image: its RBAC objects are created in the test control plane,
// and each shard's Deployment arguments run berth simulate (the same flag
// parsing as the command) with the service account's token, 2 nodes a
// shard. The nodes register with their shard's labels and taint, hold
// their Leases, run a pod each shard, and a node is removed: the role
// covers what the nodes and the Sim do.
func TestSimulateDeployment(t *testing.T) {
	c := cluster.ForTest(t, cluster.Options{})
	api, err := clientcmd.BuildConfigFromFlags("", c.AdminKubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	admin := kubernetes.NewForConfigOrDie(api)
	ctx := context.Background()
	deployments := applyManifest(t, admin)
	if len(deployments) < 2 {
		t.Fatalf("%s has %d Deployments; want a shard each, at least 2", manifest, len(deployments))
	}
	kubeconfig := serviceAccountKubeconfig(t, c, admin, deployments[0])

	sims := map[string]*simulate.Sim{}
	for _, d := range deployments {
		shard := d.Spec.Template.Labels["sim.berth.dev/shard"]
		cfg := shardConfig(t, d, "--kubeconfig="+kubeconfig, "--nodes=2", "--root-dir="+t.TempDir())
		if cfg.Kubeconfig != kubeconfig || !cfg.SharedPodWatch || cfg.Node.Labels["sim.berth.dev/shard"] != shard {
			t.Fatalf("shard %s: kubeconfig %q, shared watch %v, labels %v", shard, cfg.Kubeconfig, cfg.SharedPodWatch, cfg.Node.Labels)
		}
		sims[shard] = runSim(t, cfg)
	}
	poll(t, "every shard's nodes Ready", func() (bool, string) {
		list, err := admin.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "sim.berth.dev/simulated=true"})
		if err != nil {
			return false, err.Error()
		}
		ready := 0
		for _, n := range list.Items {
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
					ready++
				}
			}
		}
		return ready == 2*len(deployments), fmt.Sprintf("%d of %d Ready", ready, 2*len(deployments))
	})
	// The pods need the namespace's default service account, which the
	// controller manager makes.
	poll(t, "default/default service account", func() (bool, string) {
		_, err := admin.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil, fmt.Sprint(err)
	})
	for shard := range sims {
		nodes, err := admin.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "sim.berth.dev/shard=" + shard})
		if err != nil {
			t.Fatal(err)
		}
		if len(nodes.Items) != 2 {
			t.Errorf("shard %s: %d nodes; want 2", shard, len(nodes.Items))
		}
		for _, n := range nodes.Items {
			tainted := false
			for _, taint := range n.Spec.Taints {
				tainted = tainted || (taint.Key == "sim.berth.dev/simulated" && taint.Effect == corev1.TaintEffectNoSchedule)
			}
			if !tainted {
				t.Errorf("node %s taints %v; want the manifest's", n.Name, n.Spec.Taints)
			}
		}
		p := basePod("shard-"+shard, nil)
		p.Spec.NodeSelector = map[string]string{"sim.berth.dev/shard": shard}
		p.Spec.Tolerations = []corev1.Toleration{{Key: "sim.berth.dev/simulated", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
		mustCreate(t, admin, "default", p)
	}
	checkLeasesRenewed(t, admin, 2*len(deployments))
	for shard := range sims {
		waitPod(t, admin, "default", "shard-"+shard, "Running on its shard", func(p *corev1.Pod) bool {
			return p.Status.Phase == corev1.PodRunning && strings.HasPrefix(p.Spec.NodeName, "sim-"+shard+"-")
		})
	}
	// Removing a node deletes its Node and Lease with the same identity.
	for shard, sim := range sims {
		if err := sim.Remove(ctx, 1); err != nil {
			t.Errorf("shard %s: remove node 1: %v", shard, err)
		}
		if _, err := admin.CoreV1().Nodes().Get(ctx, fmt.Sprintf("sim-%s-1", shard), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("shard %s: node 1 after Remove: %v; want it gone", shard, err)
		}
		break
	}
}

// applyManifest creates the manifest's Namespace, ServiceAccount and RBAC
// objects and returns its Deployments (not created: the test control
// plane has no node to run their image).
func applyManifest(t *testing.T, client kubernetes.Interface) []*appsv1.Deployment {
	t.Helper()
	ctx := context.Background()
	b, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	var deployments []*appsv1.Deployment
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("%s: %v", manifest, err)
		}
		switch o := obj.(type) {
		case *corev1.Namespace:
			_, err = client.CoreV1().Namespaces().Create(ctx, o, metav1.CreateOptions{})
		case *corev1.ServiceAccount:
			_, err = client.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.ClusterRole:
			_, err = client.RbacV1().ClusterRoles().Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.ClusterRoleBinding:
			_, err = client.RbacV1().ClusterRoleBindings().Create(ctx, o, metav1.CreateOptions{})
		case *appsv1.Deployment:
			deployments = append(deployments, o)
		default:
			t.Fatalf("%s: unexpected %T", manifest, obj)
		}
		if err != nil {
			t.Fatalf("create %T from %s: %v", obj, manifest, err)
		}
	}
	return deployments
}

// serviceAccountKubeconfig writes a kubeconfig with a token of the
// service account d runs as: what rest.InClusterConfig gives its pod.
func serviceAccountKubeconfig(t *testing.T, c *cluster.Cluster, client kubernetes.Interface, d *appsv1.Deployment) string {
	t.Helper()
	tr, err := client.CoreV1().ServiceAccounts(d.Namespace).CreateToken(context.Background(), d.Spec.Template.Spec.ServiceAccountName,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "sa.kubeconfig")
	kc := clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"c": {Server: c.Server(), CertificateAuthority: c.CAFile()}},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"sa": {Token: tr.Status.Token}},
		Contexts:       map[string]*clientcmdapi.Context{"sa": {Cluster: "c", AuthInfo: "sa"}},
		CurrentContext: "sa",
	}
	if err := clientcmd.WriteToFile(kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// shardConfig parses d's container arguments, then extra, with berth
// simulate's flags.
func shardConfig(t *testing.T, d *appsv1.Deployment, extra ...string) simulate.Config {
	t.Helper()
	args := d.Spec.Template.Spec.Containers[0].Args
	if len(args) == 0 || args[0] != "simulate" {
		t.Fatalf("Deployment %s runs %v; want berth simulate", d.Name, args)
	}
	var f simulate.Flags
	fs := pflag.NewFlagSet("simulate", pflag.ContinueOnError)
	f.AddFlags(fs)
	if err := fs.Parse(append(append([]string{}, args[1:]...), extra...)); err != nil {
		t.Fatalf("Deployment %s: %v", d.Name, err)
	}
	cfg, err := f.Config("test", clock.RealClock{})
	if err != nil {
		t.Fatalf("Deployment %s: %v", d.Name, err)
	}
	return cfg
}

// runSim runs a Sim until the test ends.
func runSim(t *testing.T, cfg simulate.Config) *simulate.Sim {
	t.Helper()
	sim, err := simulate.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sim.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Sim.Run: %v", err)
		}
	})
	return sim
}
