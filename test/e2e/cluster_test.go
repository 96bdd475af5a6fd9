package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/test/cluster"
)

// clusterEnv is one control plane with one berth node joined to it.
type clusterEnv struct {
	cl    *cluster.Cluster
	node  *node
	admin kubernetes.Interface
}

func startClusterEnv(t *testing.T) *clusterEnv {
	t.Helper()
	return startClusterEnvWith(t, cluster.Options{})
}

// startClusterEnvWith is startClusterEnv with a control plane started
// with opts (the node's kubeconfig is always issued).
func startClusterEnvWith(t *testing.T, opts cluster.Options) *clusterEnv {
	t.Helper()
	requireE2E(t)
	ctx := context.Background()
	opts.NodeNames = append(opts.NodeNames, nodeName)
	cl, err := cluster.Start(ctx, opts)
	if err != nil {
		t.Fatalf("start control plane (run `make cluster-tools` first): %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, c := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
				t.Logf("%s log: %s", c, cl.LogPath(c))
			}
		}
		if err := cl.Stop(); err != nil {
			t.Errorf("stop control plane: %v", err)
		}
	})
	cfg, err := clientcmd.BuildConfigFromFlags("", cl.AdminKubeconfig())
	must(t, err)
	admin, err := kubernetes.NewForConfig(cfg)
	must(t, err)
	kubeconfig, err := cl.NodeKubeconfig(nodeName)
	must(t, err)
	n := newNode(t,
		"nodeStatusUpdateFrequency: 2s",
		"nodeLeaseDurationSeconds: 8",
		"clusterDNS: ["+e2eClusterDNS+"]",
		"clusterDomain: "+e2eClusterDomain,
	)
	n.extraArgs = append([]string{"--kubeconfig", kubeconfig}, kubeletAPIArgs(t, cl.CAFile())...)
	return &clusterEnv{cl: cl, node: n, admin: admin}
}

// TestCluster joins berth to a real control plane and checks what a
// kubectl user sees. The subtests share the cluster and run in order.
func TestCluster(t *testing.T) {
	env := startClusterEnv(t)
	env.node.writeManifest("static.yaml", webPod("static", "static"))
	env.node.start()
	// Pods need the namespace's default service account, which the
	// controller-manager creates shortly after start.
	env.waitAPI(t, "default service account", func(ctx context.Context) (bool, error) {
		_, err := env.admin.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	t.Run("NodeRegistersAndIsReady", env.testNodeReady)
	t.Run("LeaseRenews", env.testLease)
	t.Run("DeclaredFeatures", env.testDeclaredFeatures)
	t.Run("APIPodRunsAndDeletesGracefully", env.testAPIPod)
	t.Run("DeploymentRunsOnNode", env.testDeployment)
	t.Run("MirrorPodIsRecreated", env.testMirrorPod)
	t.Run("AdmissionRejectsOutOfcpu", env.testOutOfcpu)
	t.Run("VolumesTokenConfigMapEmptyDir", env.testVolumes)
	t.Run("VolumesSecretDownwardHostPathSubPath", env.testMoreVolumes)
	t.Run("MissingConfigMapReason", env.testMissingConfigMapReason)
	t.Run("ImagePullSecrets", env.testPullSecrets)
	t.Run("ImagePullRecords", env.testPullRecords)
	t.Run("ImagePullProgress", env.testPullProgress)
	t.Run("DNSAndHosts", env.testDNS)
	t.Run("SecurityContext", env.testSecurity)
	t.Run("EnvFromEverySource", env.testEnv)
	t.Run("APIServerRestartKeepsPods", env.testAPIServerRestart)
}

func (e *clusterEnv) waitAPI(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	var last error
	e.node.waitFor(what, func() bool {
		ok, err := cond(context.Background())
		last = err
		return ok
	})
	if last != nil {
		t.Logf("last error while waiting for %s: %v", what, last)
	}
}

// waitServiceAccount waits for the default namespace's default service
// account, which API pods need (the controller manager makes it).
func (e *clusterEnv) waitServiceAccount(t *testing.T) {
	t.Helper()
	e.waitAPI(t, "default service account", func(ctx context.Context) (bool, error) {
		_, err := e.admin.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
}

func (e *clusterEnv) testNodeReady(t *testing.T) {
	var node *corev1.Node
	e.waitAPI(t, "node Ready", func(ctx context.Context) (bool, error) {
		n, err := e.admin.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		node = n
		return conditionTrue(n.Status.Conditions, corev1.NodeReady), nil
	})
	st := node.Status
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage, corev1.ResourcePods} {
		c, a := st.Capacity[r], st.Allocatable[r]
		if c.IsZero() || a.IsZero() || a.Cmp(c) > 0 {
			t.Errorf("%s: capacity %s allocatable %s", r, c.String(), a.String())
		}
	}
	var internal, hostname bool
	for _, a := range st.Addresses {
		internal = internal || (a.Type == corev1.NodeInternalIP && a.Address != "")
		hostname = hostname || (a.Type == corev1.NodeHostName && a.Address == nodeName)
	}
	if !internal || !hostname {
		t.Errorf("addresses = %v; want an InternalIP and Hostname %s", st.Addresses, nodeName)
	}
	ni := st.NodeInfo
	if ni.BootID == "" || ni.KernelVersion == "" || ni.OSImage == "" || ni.KubeletVersion == "" ||
		!strings.HasPrefix(ni.ContainerRuntimeVersion, "containerd://") || ni.Architecture == "" {
		t.Errorf("nodeInfo incomplete: %+v", ni)
	}
	if node.Labels["kubernetes.io/hostname"] != nodeName || node.Labels["kubernetes.io/os"] != "linux" {
		t.Errorf("labels = %v", node.Labels)
	}
	for _, c := range []corev1.NodeConditionType{corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure} {
		if !hasNodeCondition(st.Conditions, c, corev1.ConditionFalse) {
			t.Errorf("condition %s not False: %v", c, st.Conditions)
		}
	}
}

func (e *clusterEnv) testLease(t *testing.T) {
	ctx := context.Background()
	var first time.Time
	e.waitAPI(t, "node lease", func(ctx context.Context) (bool, error) {
		l, err := e.admin.CoordinationV1().Leases("kube-node-lease").Get(ctx, nodeName, metav1.GetOptions{})
		if err != nil || l.Spec.RenewTime == nil {
			return false, err
		}
		first = l.Spec.RenewTime.Time
		return true, nil
	})
	e.waitAPI(t, "lease renewal", func(ctx context.Context) (bool, error) {
		l, err := e.admin.CoordinationV1().Leases("kube-node-lease").Get(ctx, nodeName, metav1.GetOptions{})
		return err == nil && l.Spec.RenewTime != nil && l.Spec.RenewTime.After(first), err
	})
	l, err := e.admin.CoordinationV1().Leases("kube-node-lease").Get(ctx, nodeName, metav1.GetOptions{})
	must(t, err)
	if ptr.Deref(l.Spec.HolderIdentity, "") != nodeName || ptr.Deref(l.Spec.LeaseDurationSeconds, 0) != 8 {
		t.Errorf("lease spec = %+v", l.Spec)
	}
}

// apiWebPod is a pod without the service account token volume: projected
// volumes come with berth's volume support (a later issue).
func apiWebPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken:  ptr.To(false),
			TerminationGracePeriodSeconds: ptr.To[int64](2),
			Containers: []corev1.Container{{
				Name: "web", Image: busybox, ImagePullPolicy: corev1.PullIfNotPresent,
				Command: []string{"sh", "-c", "mkdir -p /www && echo " + name + " > /www/index.html && exec httpd -f -p 8080 -h /www"},
			}},
		},
	}
}

func (e *clusterEnv) waitPodRunning(t *testing.T, name string) *corev1.Pod {
	t.Helper()
	var pod *corev1.Pod
	e.waitAPI(t, "pod "+name+" running", func(ctx context.Context) (bool, error) {
		p, err := e.admin.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		pod = p
		return running(p) && hasCondition(p, corev1.PodReady, corev1.ConditionTrue), nil
	})
	return pod
}

func (e *clusterEnv) testAPIPod(t *testing.T) {
	ctx := context.Background()
	_, err := e.admin.CoreV1().Pods("default").Create(ctx, apiWebPod("api-web"), metav1.CreateOptions{})
	must(t, err)
	pod := e.waitPodRunning(t, "api-web")
	if pod.Spec.NodeName != nodeName || pod.Status.HostIP == "" {
		t.Errorf("pod on %q with hostIP %q", pod.Spec.NodeName, pod.Status.HostIP)
	}
	e.node.waitFor("pod answers on its IP", func() bool {
		b, err := httpGet("http://" + pod.Status.PodIP + ":8080/")
		return err == nil && strings.TrimSpace(b) == "api-web"
	})
	e.waitAPI(t, "Started event for the container", func(ctx context.Context) (bool, error) {
		evs, err := e.admin.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=api-web"})
		if err != nil {
			return false, err
		}
		for _, ev := range evs.Items {
			if ev.Reason == "Started" && ev.InvolvedObject.FieldPath == "spec.containers{web}" &&
				ev.Source.Component == "kubelet" && ev.Source.Host == nodeName && ev.InvolvedObject.UID == pod.UID {
				return true, nil
			}
		}
		return false, nil
	})
	out, err := e.cl.Kubectl(ctx, "delete", "pod", "api-web", "--wait=false")
	if err != nil {
		t.Fatalf("kubectl delete: %v: %s", err, out)
	}
	e.waitAPI(t, "pod object gone", func(ctx context.Context) (bool, error) {
		_, err := e.admin.CoreV1().Pods("default").Get(ctx, "api-web", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	c := runtimeClient(t)
	e.node.waitFor("containers stopped", func() bool {
		_, cs := runtimeObjects(t, c, string(pod.UID))
		for _, x := range cs {
			if x.State.String() == "CONTAINER_RUNNING" {
				return false
			}
		}
		return true
	})
}

func (e *clusterEnv) testDeployment(t *testing.T) {
	ctx := context.Background()
	labels := map[string]string{"app": "sleepers"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "sleepers", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: ptr.To[int64](1),
					Containers:                    []corev1.Container{{Name: "sleep", Image: busybox, ImagePullPolicy: corev1.PullIfNotPresent, Command: []string{"sleep", "3600"}}},
				},
			},
		},
	}
	_, err := e.admin.AppsV1().Deployments("default").Create(ctx, d, metav1.CreateOptions{})
	must(t, err)
	e.waitAPI(t, "3 replicas running on berth", func(ctx context.Context) (bool, error) {
		pods, err := e.admin.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=sleepers"})
		if err != nil {
			return false, err
		}
		n := 0
		for i := range pods.Items {
			p := &pods.Items[i]
			if p.Spec.NodeName == nodeName && running(p) {
				n++
			}
		}
		return n == 3, nil
	})
	must(t, e.admin.AppsV1().Deployments("default").Delete(ctx, "sleepers", metav1.DeleteOptions{}))
}

func (e *clusterEnv) testMirrorPod(t *testing.T) {
	ctx := context.Background()
	name := fullName("static")
	var mirror *corev1.Pod
	e.waitAPI(t, "mirror pod running", func(ctx context.Context) (bool, error) {
		p, err := e.admin.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		mirror = p
		return running(p), nil
	})
	if mirror.Annotations["kubernetes.io/config.mirror"] == "" || len(mirror.OwnerReferences) != 1 || mirror.OwnerReferences[0].Kind != "Node" {
		t.Errorf("mirror pod annotations %v owners %v", mirror.Annotations, mirror.OwnerReferences)
	}
	must(t, e.admin.CoreV1().Pods("default").Delete(ctx, name, metav1.DeleteOptions{}))
	e.waitAPI(t, "mirror pod re-created", func(ctx context.Context) (bool, error) {
		p, err := e.admin.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		return err == nil && p.UID != mirror.UID && p.DeletionTimestamp == nil, nil
	})
	// The static pod itself was never disturbed.
	pods, err := e.node.pods()
	must(t, err)
	for _, p := range pods {
		if p.Name == name && p.Status.ContainerStatuses[0].RestartCount != 0 {
			t.Errorf("static pod restarted when its mirror was deleted")
		}
	}
}

func (e *clusterEnv) testOutOfcpu(t *testing.T) {
	ctx := context.Background()
	pod := apiWebPod("too-big")
	pod.Spec.NodeName = nodeName // bypass the scheduler, as a user can
	pod.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1000")}
	_, err := e.admin.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
	must(t, err)
	var got *corev1.Pod
	e.waitAPI(t, "pod rejected", func(ctx context.Context) (bool, error) {
		p, err := e.admin.CoreV1().Pods("default").Get(ctx, "too-big", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		got = p
		return p.Status.Phase == corev1.PodFailed, nil
	})
	if got.Status.Reason != "OutOfcpu" || !strings.Contains(got.Status.Message, "cpu") {
		t.Errorf("status reason %q message %q; want OutOfcpu", got.Status.Reason, got.Status.Message)
	}
	must(t, e.admin.CoreV1().Pods("default").Delete(ctx, "too-big", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}))
}

func (e *clusterEnv) testAPIServerRestart(t *testing.T) {
	ctx := context.Background()
	_, err := e.admin.CoreV1().Pods("default").Create(ctx, apiWebPod("survivor"), metav1.CreateOptions{})
	must(t, err)
	before := e.waitPodRunning(t, "survivor")
	id := before.Status.ContainerStatuses[0].ContainerID
	e.cl.StopAPIServer()
	// berth keeps running its pods while the API server is away.
	c := runtimeClient(t)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		time.Sleep(pollInterval)
	}
	_, cs := runtimeObjects(t, c, string(before.UID))
	if len(cs) != 1 || "containerd://"+cs[0].Id != id || cs[0].State.String() != "CONTAINER_RUNNING" {
		t.Fatalf("containers while the API server is down: %v; want %s running", idsC(cs), id)
	}
	if err := e.cl.StartAPIServer(ctx); err != nil {
		t.Fatalf("start API server: %v", err)
	}
	after := e.waitPodRunning(t, "survivor")
	if got := after.Status.ContainerStatuses[0]; got.ContainerID != id || got.RestartCount != 0 {
		t.Errorf("after restart: container %s restarts %d; want %s, 0", got.ContainerID, got.RestartCount, id)
	}
	e.waitAPI(t, "node heartbeat after restart", func(ctx context.Context) (bool, error) {
		n, err := e.admin.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady {
				return cond.Status == corev1.ConditionTrue && cond.LastHeartbeatTime.After(deadline), nil
			}
		}
		return false, nil
	})
	must(t, e.admin.CoreV1().Pods("default").Delete(ctx, "survivor", metav1.DeleteOptions{}))
}

func conditionTrue(conds []corev1.NodeCondition, t corev1.NodeConditionType) bool {
	return hasNodeCondition(conds, t, corev1.ConditionTrue)
}

func hasNodeCondition(conds []corev1.NodeCondition, t corev1.NodeConditionType, s corev1.ConditionStatus) bool {
	for _, c := range conds {
		if c.Type == t {
			return c.Status == s
		}
	}
	return false
}
