package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"
)

func requirements(cpuReq, cpuLim, memReq, memLim string) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpuReq), corev1.ResourceMemory: resource.MustParse(memReq)},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpuLim), corev1.ResourceMemory: resource.MustParse(memLim)},
	}
}

// resizePatch is a strategic merge patch of the containers' resources,
// for the pod's resize subresource.
func resizePatch(rs map[string]corev1.ResourceRequirements) []byte {
	var cs []string
	// In the pod's container order: a patch may not reorder them.
	for _, name := range []string{"web", "side"} {
		r, ok := rs[name]
		if !ok {
			continue
		}
		cs = append(cs, fmt.Sprintf(`{"name":%q,"resources":{"requests":{"cpu":%q,"memory":%q},"limits":{"cpu":%q,"memory":%q}}}`,
			name, r.Requests.Cpu(), r.Requests.Memory(), r.Limits.Cpu(), r.Limits.Memory()))
	}
	return []byte(`{"spec":{"containers":[` + strings.Join(cs, ",") + `]}}`)
}

// resized reports whether the pod's status shows its spec's resources
// actuated: the kubelet saw its generation, no resize condition is left,
// every container reports its spec's requests as allocated and its spec's
// resources as its own.
func resized(p *corev1.Pod) bool {
	if p.Status.ObservedGeneration < p.Generation {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodResizePending || c.Type == corev1.PodResizeInProgress {
			return false
		}
	}
	if len(p.Status.ContainerStatuses) != len(p.Spec.Containers) {
		return false
	}
	byName := map[string]corev1.ContainerStatus{}
	for _, st := range p.Status.ContainerStatuses {
		byName[st.Name] = st
	}
	for _, c := range p.Spec.Containers {
		st := byName[c.Name]
		if st.State.Running == nil || st.Resources == nil ||
			!equality.Semantic.DeepEqual(st.AllocatedResources, c.Resources.Requests) ||
			!equality.Semantic.DeepEqual(*st.Resources, c.Resources) {
			return false
		}
	}
	return true
}

// podCgroupFile reads a control file of the pod's cgroup (cgroupRoot /,
// the cgroupfs driver): v1's file in its hierarchy, else v2's.
func podCgroupFile(t *testing.T, pod *corev1.Pod, qos, v1sub, v1file, v2file string) string {
	t.Helper()
	dir := filepath.Join("kubepods", qos, "pod"+string(pod.UID))
	path := filepath.Join("/sys/fs/cgroup", v1sub, dir, v1file)
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		path = filepath.Join("/sys/fs/cgroup", dir, v2file)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("read pod cgroup: %v", err)
		return ""
	}
	return strings.TrimSpace(string(b))
}

// TestClusterInPlaceResize: a running pod resized through the API's resize
// subresource gets its new resources in place (the container whose
// resizePolicy asks for it restarts, the other does not), in the runtime,
// in its pod cgroup and in its status, with upstream's events; a resize
// the node cannot hold now is Deferred until it is put back; a restart of
// berth keeps what was allocated and restarts nothing.
func TestClusterInPlaceResize(t *testing.T) {
	e := startClusterEnv(t)
	e.node.start()
	ctx := context.Background()
	e.waitAPI(t, "default service account", func(ctx context.Context) (bool, error) {
		_, err := e.admin.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	pods := e.admin.CoreV1().Pods("default")
	pod := apiWebPod("resize")
	pod.Spec.Containers[0].Resources = requirements("100m", "200m", "32Mi", "64Mi")
	pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{
		Name: "side", Image: busybox, ImagePullPolicy: corev1.PullIfNotPresent, Command: []string{"sleep", "3600"},
		Resources:    requirements("50m", "100m", "32Mi", "64Mi"),
		ResizePolicy: []corev1.ContainerResizePolicy{{ResourceName: corev1.ResourceMemory, RestartPolicy: corev1.RestartContainer}},
	})
	_, err := pods.Create(ctx, pod, metav1.CreateOptions{})
	must(t, err)
	e.waitPodRunning(t, "resize")

	want := map[string]corev1.ResourceRequirements{
		"web":  requirements("150m", "300m", "48Mi", "96Mi"),
		"side": requirements("50m", "100m", "48Mi", "96Mi"),
	}
	_, err = pods.Patch(ctx, "resize", types.StrategicMergePatchType, resizePatch(want), metav1.PatchOptions{}, "resize")
	must(t, err)
	pod = e.waitResized(t, "resize actuated", true)
	if t.Failed() {
		t.Fatalf("pod after the resize: status %+v", pod.Status)
	}
	restarts := map[string]int32{}
	for _, st := range pod.Status.ContainerStatuses {
		restarts[st.Name] = st.RestartCount
	}
	if restarts["web"] != 0 || restarts["side"] != 1 {
		t.Errorf("restart counts = %v, want web 0 (NotRequired), side 1 (memory RestartContainer)", restarts)
	}

	checkWebResized(ctx, t, pod)
	e.waitAPI(t, "ResizeStarted and ResizeCompleted events", func(ctx context.Context) (bool, error) {
		evs, err := e.admin.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=resize"})
		if err != nil {
			return false, err
		}
		seen := map[string]bool{}
		for _, ev := range evs.Items {
			seen[ev.Reason] = true
		}
		return seen["ResizeStarted"] && seen["ResizeCompleted"], nil
	})

	// More cpu than the node has free while another pod holds most of it:
	// Deferred, with the admission's message; admitted once that pod is
	// gone.
	blocker := apiWebPod("blocker")
	blocker.Spec.Containers[0].Resources = requirements("1500m", "1500m", "16Mi", "16Mi")
	_, err = pods.Create(ctx, blocker, metav1.CreateOptions{})
	must(t, err)
	e.waitPodRunning(t, "blocker")
	bigger := map[string]corev1.ResourceRequirements{"web": requirements("500m", "500m", "48Mi", "96Mi")}
	_, err = pods.Patch(ctx, "resize", types.StrategicMergePatchType, resizePatch(bigger), metav1.PatchOptions{}, "resize")
	must(t, err)
	e.waitDeferred(t)
	must(t, pods.Delete(ctx, "blocker", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}))
	e.waitResized(t, "deferred resize admitted once the other pod left", false)

	// A restart of berth keeps the allocation and restarts nothing.
	e.node.stop()
	e.node.start()
	pod = e.waitResized(t, "pod still resized and ready after a restart of berth", true)
	for _, st := range pod.Status.ContainerStatuses {
		if st.RestartCount != restarts[st.Name] {
			t.Errorf("container %s restarted after berth's restart: %d, was %d", st.Name, st.RestartCount, restarts[st.Name])
		}
	}
	e.testResizeAdmittedWhenPodEnds(t, pod)
}

// testResizeAdmittedWhenPodEnds: a resize Deferred while another pod holds
// the cpu is admitted once that pod ends, still in the API: its status
// turning terminal retries the pending resizes (upstream's pod_terminated
// trigger). Run right after berth started, so that the 3-minute periodic
// retry cannot come first within the wait.
func (e *clusterEnv) testResizeAdmittedWhenPodEnds(t *testing.T, pod *corev1.Pod) {
	ctx := context.Background()
	pods := e.admin.CoreV1().Pods("default")
	node, err := e.admin.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
	must(t, err)
	free := node.Status.Allocatable.Cpu().MilliValue()
	for _, c := range pod.Spec.Containers {
		free -= c.Resources.Requests.Cpu().MilliValue()
	}
	// The blocker leaves 50m; the resize asks 100m more.
	blocker := apiWebPod("ending-blocker")
	blocker.Spec.RestartPolicy = corev1.RestartPolicyNever
	cpu := fmt.Sprintf("%dm", free-50)
	blocker.Spec.Containers[0].Resources = requirements(cpu, cpu, "16Mi", "16Mi")
	_, err = pods.Create(ctx, blocker, metav1.CreateOptions{})
	must(t, err)
	blocker = e.waitPodRunning(t, "ending-blocker")
	web := pod.Spec.Containers[0].Resources
	web.Requests[corev1.ResourceCPU] = *resource.NewMilliQuantity(web.Requests.Cpu().MilliValue()+100, resource.DecimalSI)
	web.Limits[corev1.ResourceCPU] = *resource.NewMilliQuantity(web.Limits.Cpu().MilliValue()+100, resource.DecimalSI)
	_, err = pods.Patch(ctx, "resize", types.StrategicMergePatchType, resizePatch(map[string]corev1.ResourceRequirements{"web": web}),
		metav1.PatchOptions{}, "resize")
	must(t, err)
	e.waitDeferred(t)
	// The blocker's container stops: the pod ends (restartPolicy Never).
	c := runtimeClient(t)
	_, ctrs := runtimeObjects(t, c, string(blocker.UID))
	for _, ctr := range ctrs {
		_, err := c.Runtime.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: ctr.Id})
		must(t, err)
	}
	e.waitResized(t, "deferred resize admitted once the other pod ended", false)
	must(t, pods.Delete(ctx, "ending-blocker", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}))
}

// waitDeferred waits until the pod "resize" has its resize Deferred, with
// the admission's message about cpu.
func (e *clusterEnv) waitDeferred(t *testing.T) {
	t.Helper()
	e.waitAPI(t, "resize Deferred", func(ctx context.Context) (bool, error) {
		p, err := e.admin.CoreV1().Pods("default").Get(ctx, "resize", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodResizePending {
				if c.Reason != corev1.PodReasonDeferred || !strings.Contains(c.Message, "Node didn't have enough resource: cpu") || c.ObservedGeneration != p.Generation {
					return false, fmt.Errorf("pending condition %+v", c)
				}
				return true, nil
			}
		}
		return false, nil
	})
}

// waitResized waits until the pod "resize" shows the resources of its
// spec in its status (resized), and with ready is Ready too, and returns
// it.
func (e *clusterEnv) waitResized(t *testing.T, what string, ready bool) *corev1.Pod {
	t.Helper()
	var pod *corev1.Pod
	e.waitAPI(t, what, func(ctx context.Context) (bool, error) {
		p, err := e.admin.CoreV1().Pods("default").Get(ctx, "resize", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		pod = p
		return resized(p) && (!ready || hasCondition(p, corev1.PodReady, corev1.ConditionTrue)), nil
	})
	if pod == nil {
		t.Fatalf("%s: the pod was never read", what)
	}
	return pod
}

// checkWebResized checks that the runtime and the pod cgroup have the
// values of the first resize: web at 300m and 96Mi, the pod at 400m and
// 192Mi.
func checkWebResized(ctx context.Context, t *testing.T, pod *corev1.Pod) {
	t.Helper()
	c := runtimeClient(t)
	var webID string
	for _, st := range pod.Status.ContainerStatuses {
		if st.Name == "web" {
			webID = strings.TrimPrefix(st.ContainerID, "containerd://")
		}
	}
	st, err := c.Runtime.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: webID})
	must(t, err)
	if lr := st.GetStatus().GetResources().GetLinux(); lr != nil && (lr.GetCpuQuota() != 30000 || lr.GetMemoryLimitInBytes() != 96<<20) {
		t.Errorf("web's runtime resources: quota %d memory %d, want 30000 and %d", lr.GetCpuQuota(), lr.GetMemoryLimitInBytes(), 96<<20)
	}
	if got := podCgroupFile(t, pod, "burstable", "cpu", "cpu.cfs_quota_us", "cpu.max"); got != "40000" && got != "40000 100000" {
		t.Errorf("pod cgroup cpu quota = %q, want 400m", got)
	}
	if got := podCgroupFile(t, pod, "burstable", "memory", "memory.limit_in_bytes", "memory.max"); got != fmt.Sprint(192<<20) {
		t.Errorf("pod cgroup memory limit = %q, want %d", got, 192<<20)
	}
}
