package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/node/eviction"
	"github.com/berthk8s/berth/internal/platform/cri"
)

// TestClusterEviction checks the eviction manager on a berth node joined
// to a real control plane: a pod writing past its emptyDir sizeLimit is
// evicted, and a BestEffort pod filling memory is evicted before a
// Guaranteed one once memory.available crosses a threshold the test sets
// below what the node has, with the kernel memcg notification on.
func TestClusterEviction(t *testing.T) {
	e := startClusterEnv(t)
	// The baseline is measured with berth started once: its start removes
	// every pod it was not asked to run, and the memory of an earlier run's
	// leftover would otherwise be in the baseline and then freed, keeping
	// memory.available above the threshold (why this test once never saw
	// MemoryPressure).
	e.node.start()
	waitNoReadySandboxes(t)
	threshold := memoryAvailable(t) - 1536<<20
	e.node.stop()
	// Only this threshold: the shared machine's disks must not evict.
	// Volumes are measured every 5 s so the emptyDir check is prompt.
	e.node.setEviction(fmt.Sprintf("evictionHard:\n  memory.available: %q\nevictionPressureTransitionPeriod: 20s\nvolumeStatsAggPeriod: 5s\nkernelMemcgNotification: true\n",
		strconv.FormatInt(threshold, 10)))
	e.node.start()
	e.waitAPI(t, "default service account", func(ctx context.Context) (bool, error) {
		_, err := e.admin.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	t.Run("EmptyDirSizeLimit", e.testEmptyDirSizeLimit)
	t.Run("MemoryBestEffortFirst", e.testMemoryEviction)
}

// waitNoReadySandboxes waits until containerd runs no pod sandbox: berth,
// just started with no pods, has removed every other.
func waitNoReadySandboxes(t *testing.T) {
	t.Helper()
	c := runtimeClient(t)
	ready := &runtimeapi.PodSandboxFilter{State: &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState_SANDBOX_READY}}
	deadline := time.Now().Add(waitTimeout)
	for {
		resp, err := c.Runtime.ListPodSandbox(context.Background(), &runtimeapi.ListPodSandboxRequest{Filter: ready})
		must(t, err)
		if len(resp.Items) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d pod sandboxes still ready %s after berth started", len(resp.Items), waitTimeout)
		}
		time.Sleep(pollInterval)
	}
}

// memoryAvailable is memory.available as the eviction manager computes
// it on cgroup v1: capacity minus the root cgroup's working set.
func memoryAvailable(t *testing.T) int64 {
	usage, err := os.ReadFile("/sys/fs/cgroup/memory/memory.usage_in_bytes")
	if err != nil {
		t.Skipf("no cgroup v1 memory controller: %v", err)
	}
	u, err := strconv.ParseInt(strings.TrimSpace(string(usage)), 10, 64)
	must(t, err)
	stat, err := os.Open("/sys/fs/cgroup/memory/memory.stat")
	must(t, err)
	defer stat.Close()
	var inactive int64
	for s := bufio.NewScanner(stat); s.Scan(); {
		if v, ok := strings.CutPrefix(s.Text(), "total_inactive_file "); ok {
			inactive, err = strconv.ParseInt(v, 10, 64)
			must(t, err)
		}
	}
	meminfo, err := os.ReadFile("/proc/meminfo")
	must(t, err)
	var totalKB int64
	_, err = fmt.Sscanf(strings.SplitN(string(meminfo), "\n", 2)[0], "MemTotal: %d kB", &totalKB)
	must(t, err)
	return totalKB*1024 - (u - inactive)
}

func (e *clusterEnv) evictedPod(t *testing.T, name string) *corev1.Pod {
	t.Helper()
	var pod *corev1.Pod
	e.waitAPI(t, "pod "+name+" evicted", func(ctx context.Context) (bool, error) {
		p, err := e.admin.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		pod = p
		return p.Status.Phase == corev1.PodFailed && p.Status.Reason == "Evicted", nil
	})
	return pod
}

func (e *clusterEnv) testEmptyDirSizeLimit(t *testing.T) {
	pod := lifecyclePod("scratch-hog", "head -c 4194304 /dev/zero > /scratch/fill && sleep 3600")
	pod.Spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{
		EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(resource.MustParse("1Mi"))}}}}
	pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}}
	_, err := e.admin.CoreV1().Pods("default").Create(context.Background(), pod, metav1.CreateOptions{})
	must(t, err)
	got := e.evictedPod(t, "scratch-hog")
	if want := `Usage of EmptyDir volume "scratch" exceeds the limit "1Mi". `; got.Status.Message != want {
		t.Errorf("message %q, want %q", got.Status.Message, want)
	}
	// As upstream, a local storage eviction adds no DisruptionTarget.
	for _, c := range got.Status.Conditions {
		if c.Type == corev1.DisruptionTarget {
			t.Errorf("local storage eviction has a DisruptionTarget condition: %+v", c)
		}
	}
}

// deletePodsAtEnd deletes the pods when the test ends and waits until
// their containers are stopped, before berth stops (which leaves pods
// running, as the kubelet does): a leftover hog would skew the next run.
func (e *clusterEnv) deletePodsAtEnd(t *testing.T, names ...string) {
	t.Cleanup(func() {
		ctx := context.Background()
		c := runtimeClient(t)
		var uids []string
		for _, name := range names {
			p, err := e.admin.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				continue
			}
			uids = append(uids, string(p.UID))
			_ = e.admin.CoreV1().Pods("default").Delete(ctx, name, metav1.DeleteOptions{})
		}
		for _, uid := range uids {
			e.node.waitFor("pod "+uid+" stopped", func() bool { return runningContainers(t, c, uid) == 0 })
		}
	})
}

// runningContainers counts uid's running containers in containerd.
func runningContainers(t *testing.T, c *cri.Client, uid string) int {
	_, cs := runtimeObjects(t, c, uid)
	n := 0
	for _, ctr := range cs {
		if ctr.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			n++
		}
	}
	return n
}

func (e *clusterEnv) testMemoryEviction(t *testing.T) {
	ctx := context.Background()
	e.deletePodsAtEnd(t, "guaranteed", "memory-hog")
	guaranteed := lifecyclePod("guaranteed", "sleep 3600")
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("64Mi")}
	guaranteed.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: res, Limits: res}
	_, err := e.admin.CoreV1().Pods("default").Create(ctx, guaranteed, metav1.CreateOptions{})
	must(t, err)
	e.waitPodRunning(t, "guaranteed")
	// The hog fills a memory-backed emptyDir (charged to its cgroup) 64 MiB
	// at a time, up to 5 GiB: it takes what crossing the threshold takes,
	// however the shared machine's memory moved since the baseline, and no
	// more than the eviction lets it.
	//
	// It pauses after 256 MiB for longer than the manager's 10 s
	// monitoring period, so that a pass sees it ranked before any pressure.
	hog := lifecyclePod("memory-hog", "i=0; while [ $i -lt 80 ]; do head -c 67108864 /dev/zero > /mem/f$i || break; i=$((i+1)); if [ $i -eq 4 ]; then sleep 12; fi; sleep 0.2; done; sleep 3600")
	hog.Spec.Volumes = []corev1.Volume{{Name: "mem", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}}}
	hog.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "mem", MountPath: "/mem"}}
	_, err = e.admin.CoreV1().Pods("default").Create(ctx, hog, metav1.CreateOptions{})
	must(t, err)
	e.checkExplainerRanksHogFirst(t)
	var pressureAt time.Time
	e.waitAPI(t, "MemoryPressure on the node", func(ctx context.Context) (bool, error) {
		n, err := e.admin.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		pressureAt = time.Now()
		return hasNodeCondition(n.Status.Conditions, corev1.NodeMemoryPressure, corev1.ConditionTrue), nil
	})
	got := e.evictedPod(t, "memory-hog")
	// As upstream, the phase is Failed only once the containers stopped.
	if n := runningContainers(t, runtimeClient(t), string(got.UID)); n != 0 {
		t.Errorf("evicted pod reported Failed with %d containers still running", n)
	}
	if !strings.HasPrefix(got.Status.Message, "The node was low on resource: memory. Threshold quantity: ") ||
		!strings.Contains(got.Status.Message, "Container main was using ") {
		t.Errorf("message %q, want upstream's memory eviction message", got.Status.Message)
	}
	if !hasCondition(got, corev1.DisruptionTarget, corev1.ConditionTrue) {
		t.Errorf("conditions %+v: no DisruptionTarget", got.Status.Conditions)
	}
	e.waitAPI(t, "Evicted event on memory-hog", func(ctx context.Context) (bool, error) {
		evs, err := e.admin.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=memory-hog,reason=Evicted"})
		return err == nil && len(evs.Items) > 0 && evs.Items[0].Message == got.Status.Message, err
	})
	g, err := e.admin.CoreV1().Pods("default").Get(ctx, "guaranteed", metav1.GetOptions{})
	must(t, err)
	if g.Status.Phase != corev1.PodRunning {
		t.Errorf("guaranteed pod %s (%s): evicted before or with the BestEffort one", g.Status.Phase, g.Status.Message)
	}
	e.checkNodeCurrent(t, pressureAt)
	if log, err := os.ReadFile(e.node.logPath); err != nil || !strings.Contains(string(log), "eviction manager: hard memory eviction threshold crossed") {
		t.Errorf("berth's log has no memcg notification (kernelMemcgNotification): %v", err)
	}
	// As upstream, the manager waited for the hog to be cleaned up (its
	// containers stopped, its memory-backed emptyDir unmounted) before it
	// looked again, and the hog was, well within the 30 s it waits.
	e.node.waitFor("the evicted pod cleaned up", func() bool {
		log, err := os.ReadFile(e.node.logPath)
		return err == nil && slices.ContainsFunc(strings.Split(string(log), "\n"), func(line string) bool {
			return strings.Contains(line, `"Eviction manager: pods successfully cleaned up"`) && strings.Contains(line, `pods=["default/memory-hog"]`)
		})
	})
	e.waitAPI(t, "MemoryPressure cleared", func(ctx context.Context) (bool, error) {
		n, err := e.admin.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		return err == nil && hasNodeCondition(n.Status.Conditions, corev1.NodeMemoryPressure, corev1.ConditionFalse), err
	})
}

// checkExplainerRanksHogFirst reads the eviction explainer (GET
// /debug/eviction through the API server's node proxy) until a pass ranks
// the pods by memory: the BestEffort hog first, above its request of
// nothing, the Guaranteed pod after it, while the hog is not evicted yet.
func (e *clusterEnv) checkExplainerRanksHogFirst(t *testing.T) {
	t.Helper()
	var ranked []eviction.RankedView
	e.waitAPI(t, "the explainer ranking memory-hog first", func(ctx context.Context) (bool, error) {
		body, err := e.cl.Kubectl(ctx, "get", "--raw", "/api/v1/nodes/"+nodeName+"/proxy/debug/eviction")
		if err != nil {
			return false, nil
		}
		var ex eviction.Explanation
		if err := json.Unmarshal([]byte(body), &ex); err != nil {
			return false, fmt.Errorf("explanation %q: %w", body, err)
		}
		for _, r := range ex.Rankings {
			if r.Signal == eviction.SignalMemoryAvailable {
				ranked = r.Pods
			}
		}
		hog, err := e.admin.CoreV1().Pods("default").Get(ctx, "memory-hog", metav1.GetOptions{})
		if err != nil || hog.Status.Phase != corev1.PodRunning {
			return false, err
		}
		// A pass may see the hog just started, before it wrote anything
		// (usage 0 is not above a BestEffort's request of 0): wait for one
		// that saw it write, which its 12 s pause leaves room for.
		return slices.ContainsFunc(ranked, func(r eviction.RankedView) bool {
			return r.Pod == "default/memory-hog" && r.HasStats && r.ExceedsRequests
		}), nil
	})
	t.Logf("memory ranking before the eviction: %+v", ranked)
	if ranked[0].Pod != "default/memory-hog" || ranked[0].QOSClass != corev1.PodQOSBestEffort || !ranked[0].ExceedsRequests {
		t.Errorf("first in the memory ranking: %+v, want the BestEffort memory-hog above its request", ranked[0])
	}
	g := slices.IndexFunc(ranked, func(r eviction.RankedView) bool { return r.Pod == "default/guaranteed" })
	if g < 1 {
		t.Errorf("guaranteed at index %d of the ranking, want after the hog", g)
	}
}

// checkNodeCurrent checks that berth kept its node status current while
// it evicted: the lease renewed after since and the node is Ready.
func (e *clusterEnv) checkNodeCurrent(t *testing.T, since time.Time) {
	t.Helper()
	e.waitAPI(t, "lease renewed during the eviction", func(ctx context.Context) (bool, error) {
		l, err := e.admin.CoordinationV1().Leases("kube-node-lease").Get(ctx, nodeName, metav1.GetOptions{})
		return err == nil && l.Spec.RenewTime != nil && l.Spec.RenewTime.After(since), err
	})
	n, err := e.admin.CoreV1().Nodes().Get(context.Background(), nodeName, metav1.GetOptions{})
	must(t, err)
	if !hasNodeCondition(n.Status.Conditions, corev1.NodeReady, corev1.ConditionTrue) {
		t.Errorf("node not Ready while evicting: %+v", n.Status.Conditions)
	}
}
