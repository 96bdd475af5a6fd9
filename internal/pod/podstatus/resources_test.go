package podstatus

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

func q(s string) *resource.Quantity { v := resource.MustParse(s); return &v }

func list(pairs ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(pairs); i += 2 {
		l[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return l
}

// TestContainerStatusResources pins a container status's resources and
// allocatedResources to upstream's convertContainerStatusResources and
// toKubeContainerStatus: one base case (a running container whose
// runtime reports nothing, no previous status, no actuated record) and one
// change per row.
func TestContainerStatusResources(t *testing.T) {
	spec := corev1.ResourceRequirements{
		Requests: list("cpu", "100m", "memory", "64Mi"),
		Limits:   list("cpu", "500m", "memory", "128Mi"),
	}
	prevRes := &corev1.ResourceRequirements{
		Requests: list("cpu", "300m", "memory", "32Mi"),
		Limits:   list("cpu", "700m", "memory", "96Mi"),
	}
	runningPrev := func(id string) *corev1.ContainerStatus {
		return &corev1.ContainerStatus{Name: "app", ContainerID: "containerd://" + id, Resources: prevRes,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
	}
	tests := []struct {
		name     string
		spec     *corev1.ResourceRequirements
		reported *runtimestate.ContainerResources
		state    runtimestate.ContainerState
		prev     *corev1.ContainerStatus
		actuated map[string]corev1.ResourceRequirements
		want     *corev1.ResourceRequirements
	}{
		{name: "running, nothing known: the allocated resources", want: &spec},
		{name: "runtime reports shares for 20m, a 1Gi limit and 2 CPUs",
			reported: &runtimestate.ContainerResources{CPURequest: q("20m"), CPULimit: q("2"), MemoryLimit: q("1Gi")},
			want: &corev1.ResourceRequirements{Requests: list("cpu", "20m", "memory", "64Mi"),
				Limits: list("cpu", "2", "memory", "1Gi")}},
		{name: "at MinShares with a request under it: the allocated request",
			spec:     &corev1.ResourceRequirements{Requests: list("cpu", "1m")},
			reported: &runtimestate.ContainerResources{CPURequest: q("2m")},
			want:     &corev1.ResourceRequirements{Requests: list("cpu", "1m")}},
		{name: "at MinShares with a request over it: the reported request",
			spec:     &corev1.ResourceRequirements{Requests: list("cpu", "3m")},
			reported: &runtimestate.ContainerResources{CPURequest: q("2m")},
			want:     &corev1.ResourceRequirements{Requests: list("cpu", "2m")}},
		{name: "at the quota floor with a limit under it: the allocated limit",
			spec:     &corev1.ResourceRequirements{Limits: list("cpu", "5m")},
			reported: &runtimestate.ContainerResources{CPULimit: q("10m")},
			want:     &corev1.ResourceRequirements{Limits: list("cpu", "5m")}},
		{name: "over the quota floor: the reported limit",
			spec:     &corev1.ResourceRequirements{Limits: list("cpu", "5m")},
			reported: &runtimestate.ContainerResources{CPULimit: q("11m")},
			want:     &corev1.ResourceRequirements{Limits: list("cpu", "11m")}},
		{name: "no limits in the spec: reported limits not shown",
			spec:     &corev1.ResourceRequirements{Requests: list("cpu", "100m")},
			reported: &runtimestate.ContainerResources{CPURequest: q("200m"), CPULimit: q("1"), MemoryLimit: q("1Gi")},
			want:     &corev1.ResourceRequirements{Requests: list("cpu", "200m")}},
		{name: "nothing reported: the previous status's values for the same running container",
			prev: runningPrev("c1"), want: prevRes},
		{name: "reported values win over the previous status's",
			reported: &runtimestate.ContainerResources{CPURequest: q("20m")}, prev: runningPrev("c1"),
			want: &corev1.ResourceRequirements{Requests: list("cpu", "20m", "memory", "32Mi"),
				Limits: list("cpu", "700m", "memory", "96Mi")}},
		{name: "previous status of another container: the allocated resources",
			prev: runningPrev("c0"), want: &spec},
		{name: "previous status not running: the allocated resources",
			prev: &corev1.ContainerStatus{Name: "app", ContainerID: "containerd://c1", Resources: prevRes,
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{}}},
			want: &spec},
		{name: "not running: the allocated resources, whatever is reported",
			state:    runtimestate.ContainerExited,
			reported: &runtimestate.ContainerResources{CPURequest: q("20m")}, prev: runningPrev("c1"),
			want: &spec},
		{name: "nothing reported: the actuated resources",
			actuated: map[string]corev1.ResourceRequirements{"app": {
				Requests: list("cpu", "250m", "memory", "80Mi"), Limits: list("memory", "100Mi")}},
			prev: runningPrev("c1"),
			// The record has no CPU limit: 0, at the floor like the
			// allocated one is not, so the allocated 500m is replaced.
			want: &corev1.ResourceRequirements{Requests: list("cpu", "250m", "memory", "80Mi"),
				Limits: list("cpu", "0", "memory", "100Mi")}},
		{name: "reported resources with the actuated memory request",
			reported: &runtimestate.ContainerResources{CPURequest: q("20m")},
			actuated: map[string]corev1.ResourceRequirements{"app": {Requests: list("cpu", "250m", "memory", "80Mi")}},
			prev:     runningPrev("c1"),
			want: &corev1.ResourceRequirements{Requests: list("cpu", "20m", "memory", "80Mi"),
				Limits: list("cpu", "700m", "memory", "96Mi")}},
		{name: "a zero actuated memory request: the previous status's",
			reported: &runtimestate.ContainerResources{CPURequest: q("20m")},
			actuated: map[string]corev1.ResourceRequirements{"app": {Requests: list("cpu", "250m")}},
			prev:     runningPrev("c1"),
			want: &corev1.ResourceRequirements{Requests: list("cpu", "20m", "memory", "32Mi"),
				Limits: list("cpu", "700m", "memory", "96Mi")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := staticPod("app")
			pod.Spec.Containers[0].Resources = *spec.DeepCopy()
			if tt.spec != nil {
				pod.Spec.Containers[0].Resources = *tt.spec
			}
			c := running("app", "c1", 0)
			if tt.state != runtimestate.ContainerUnknown {
				c = withState(c, tt.state)
			}
			c.Resources = tt.reported
			in := Input{Pod: pod, Runtime: rt(sbs(readySandbox("10.244.0.5")), c), Actuated: tt.actuated, Now: now}
			if tt.prev != nil {
				in.Previous = &corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{*tt.prev}}
			}
			got := Generate(in).ContainerStatuses[0]
			if diff := cmp.Diff(tt.want, got.Resources); diff != "" {
				t.Errorf("resources (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(pod.Spec.Containers[0].Resources.Requests, got.AllocatedResources); diff != "" {
				t.Errorf("allocatedResources (-want +got):\n%s", diff)
			}
		})
	}
}

// TestContainerStatusResourcesWhichStatuses: init and regular containers
// the runtime has carry resources; a container it has none of, and an
// ephemeral one, do not.
func TestContainerStatusResourcesWhichStatuses(t *testing.T) {
	res := corev1.ResourceRequirements{Requests: list("cpu", "100m")}
	pod := withInit(staticPod("app", "late"), "init")
	for i := range pod.Spec.Containers {
		pod.Spec.Containers[i].Resources = res
	}
	pod.Spec.InitContainers[0].Resources = res
	pod.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug", Image: "debug:1"}}}
	got := Generate(Input{Pod: pod, Now: now, Runtime: rt(sbs(readySandbox("10.244.0.5")),
		running("debug", "e1", 0), running("app", "c1", 0), exited("init", "i1", 0, "", 0))})
	for _, tt := range []struct {
		s    corev1.ContainerStatus
		want *corev1.ResourceRequirements
	}{
		{got.InitContainerStatuses[0], &res},
		{got.ContainerStatuses[0], &res},
		{got.ContainerStatuses[1], nil},
		{got.EphemeralContainerStatuses[0], nil},
	} {
		if diff := cmp.Diff(tt.want, tt.s.Resources); diff != "" {
			t.Errorf("%s: resources (-want +got):\n%s", tt.s.Name, diff)
		}
		if tt.want == nil && tt.s.AllocatedResources != nil {
			t.Errorf("%s: allocatedResources = %v, want none", tt.s.Name, tt.s.AllocatedResources)
		}
	}
}

// TestPodLevelResources pins status.allocatedResources and
// status.resources to upstream's PodRequests and
// getEffectiveAllocatedResources, set for every pod, running or not.
func TestPodLevelResources(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*corev1.Pod)
		running bool
		want    *corev1.ResourceRequirements
	}{
		{name: "no resources", want: &corev1.ResourceRequirements{Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}}},
		{name: "containers' requests add up, limits too, with overhead",
			mutate: func(p *corev1.Pod) {
				p.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: list("cpu", "100m", "memory", "64Mi"), Limits: list("memory", "128Mi")}
				p.Spec.Containers[1].Resources = corev1.ResourceRequirements{Requests: list("cpu", "200m", "ephemeral-storage", "1Gi"), Limits: list("memory", "128Mi")}
				p.Spec.Overhead = list("cpu", "10m", "memory", "1Mi")
			},
			running: true,
			want: &corev1.ResourceRequirements{Requests: list("cpu", "310m", "memory", "65Mi", "ephemeral-storage", "1Gi"),
				Limits: list("memory", "257Mi")}},
		{name: "pod-level resources win for cpu and memory",
			mutate: func(p *corev1.Pod) {
				p.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: list("cpu", "100m", "ephemeral-storage", "1Gi")}
				p.Spec.Resources = &corev1.ResourceRequirements{Requests: list("cpu", "1", "memory", "1Gi"), Limits: list("cpu", "2", "memory", "1Gi")}
			},
			want: &corev1.ResourceRequirements{Requests: list("cpu", "1", "memory", "1Gi", "ephemeral-storage", "1Gi"),
				Limits: list("cpu", "2", "memory", "1Gi")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := staticPod("a", "b")
			if tt.mutate != nil {
				tt.mutate(pod)
			}
			in := Input{Pod: pod, Now: now}
			if tt.running {
				in.Runtime = rt(sbs(readySandbox("10.244.0.5")), running("b", "c2", 0), running("a", "c1", 0))
				in.Previous = &corev1.PodStatus{Phase: corev1.PodRunning}
			}
			got := Generate(in)
			if diff := cmp.Diff(tt.want, got.Resources); diff != "" {
				t.Errorf("resources (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want.Requests, got.AllocatedResources); diff != "" {
				t.Errorf("allocatedResources (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPodLevelResourcesRunning: a running pod's status.resources show what
// its pod cgroup was last set to (the actuated pod-level and container
// resources), its memory request the allocation's, as upstream reads the
// cgroup back; so a pod-level resize that was not applied does not show
// as done. allocatedResources stay the allocation's.
func TestPodLevelResourcesRunning(t *testing.T) {
	pod := staticPod("a", "b")
	pod.Status.Phase = corev1.PodRunning
	pod.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: list("cpu", "20m", "memory", "35Mi")}
	pod.Spec.Resources = &corev1.ResourceRequirements{Requests: list("cpu", "40m", "memory", "10Ki"), Limits: list("cpu", "40m", "memory", "10Ki")}
	in := Input{
		Pod: pod, Now: now,
		Runtime:     rt(sbs(readySandbox("10.244.0.5")), running("b", "c2", 0), running("a", "c1", 0)),
		Previous:    &corev1.PodStatus{Phase: corev1.PodRunning},
		Actuated:    map[string]corev1.ResourceRequirements{"a": pod.Spec.Containers[0].Resources},
		ActuatedPod: &corev1.ResourceRequirements{Requests: list("cpu", "30m", "memory", "64Mi"), Limits: list("cpu", "30m", "memory", "64Mi")},
	}
	got := Generate(in)
	want := &corev1.ResourceRequirements{Requests: list("cpu", "30m", "memory", "10Ki"), Limits: list("cpu", "30m", "memory", "64Mi")}
	if diff := cmp.Diff(want, got.Resources); diff != "" {
		t.Errorf("resources (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(list("cpu", "40m", "memory", "10Ki"), got.AllocatedResources); diff != "" {
		t.Errorf("allocatedResources (-want +got):\n%s", diff)
	}
}
