package podplan

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

func resources(cpuReq, cpuLim, memReq, memLim string) corev1.ResourceRequirements {
	rl := func(cpu, mem string) corev1.ResourceList {
		l := corev1.ResourceList{}
		if cpu != "" {
			l[corev1.ResourceCPU] = resource.MustParse(cpu)
		}
		if mem != "" {
			l[corev1.ResourceMemory] = resource.MustParse(mem)
		}
		return l
	}
	return corev1.ResourceRequirements{Requests: rl(cpuReq, memReq), Limits: rl(cpuLim, memLim)}
}

func restartOn(r corev1.ResourceName) []corev1.ContainerResizePolicy {
	other := corev1.ResourceCPU
	if r == corev1.ResourceCPU {
		other = corev1.ResourceMemory
	}
	return []corev1.ContainerResizePolicy{
		{ResourceName: r, RestartPolicy: corev1.RestartContainer},
		{ResourceName: other, RestartPolicy: corev1.NotRequired},
	}
}

// TestComputeResize: what an allocation that differs from what the
// running containers have plans (upstream's computePodResizeAction,
// startingResizedContainer and IsPodResizeInProgress).
func TestComputeResize(t *testing.T) {
	now := at(time.Hour)
	before := resources("20m", "30m", "35Mi", "45Mi")
	moreCPU := resources("25m", "35m", "35Mi", "45Mi")
	lessMem := resources("20m", "30m", "30Mi", "40Mi")
	tests := []struct {
		name     string
		pod      func(*corev1.Pod)                             // the allocation, on the spec
		runtime  func(*corev1.Pod) []runtimestate.Container    // default: both running
		actuated func() map[string]corev1.ResourceRequirements // default: both at before
		podLevel *corev1.ResourceRequirements                  // ActuatedPod
		want     Actions
	}{
		{
			name: "allocation as actuated: nothing",
			want: Actions{},
		},
		{
			name: "cpu raised, NotRequired: update in place",
			pod:  func(p *corev1.Pod) { p.Spec.Containers[1].Resources = moreCPU },
			want: Actions{Resize: Resize{
				Containers: []ResizeContainer{{ContainerRef: ContainerRef{ID: "db-1", Name: "db"}, Index: 1}},
				PodCgroup:  true, InProgress: true,
			}},
		},
		{
			name: "memory lowered, memory RestartContainer: restart it",
			pod: func(p *corev1.Pod) {
				p.Spec.Containers[0].Resources = lessMem
				p.Spec.Containers[0].ResizePolicy = restartOn(corev1.ResourceMemory)
			},
			want: Actions{
				SandboxID: "sb-0", StartContainers: []int{0},
				KillContainers: map[ContainerRef]KillReason{{ID: "web-1", Name: "web"}: {Reason: KillReasonResize, Message: "Container web resize requires restart"}},
				Resize:         Resize{PodCgroup: true, InProgress: true},
			},
		},
		{
			name: "cpu raised, only memory RestartContainer: in place",
			pod: func(p *corev1.Pod) {
				p.Spec.Containers[0].Resources = moreCPU
				p.Spec.Containers[0].ResizePolicy = restartOn(corev1.ResourceMemory)
			},
			want: Actions{Resize: Resize{
				Containers: []ResizeContainer{{ContainerRef: ContainerRef{ID: "web-1", Name: "web"}}},
				PodCgroup:  true, InProgress: true,
			}},
		},
		{
			name: "pod-level limit fills a container's missing limit",
			pod: func(p *corev1.Pod) {
				p.Spec.Resources = &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}
				p.Spec.Containers[0].Resources = resources("20m", "", "35Mi", "45Mi")
			},
			actuated: func() map[string]corev1.ResourceRequirements {
				return map[string]corev1.ResourceRequirements{"web": resources("20m", "", "35Mi", "45Mi"), "db": before}
			},
			podLevel: &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}},
			want:     Actions{},
		},
		{
			name: "pod-level cpu limit raised: the pod cgroup, and the container that inherits it",
			pod: func(p *corev1.Pod) {
				p.Spec.Resources = &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m")}}
				p.Spec.Containers[0].Resources = resources("20m", "", "35Mi", "45Mi")
			},
			actuated: func() map[string]corev1.ResourceRequirements {
				return map[string]corev1.ResourceRequirements{"web": resources("20m", "", "35Mi", "45Mi"), "db": before}
			},
			podLevel: &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}},
			want: Actions{Resize: Resize{
				Containers: []ResizeContainer{{ContainerRef: ContainerRef{ID: "web-1", Name: "web"}}},
				PodCgroup:  true, InProgress: true,
			}},
		},
		{
			name: "exited container restarts with new resources: pod cgroup first, not in progress",
			pod:  func(p *corev1.Pod) { p.Spec.Containers[0].Resources = moreCPU },
			runtime: func(p *corev1.Pod) []runtimestate.Container {
				return []runtimestate.Container{exited(p, "web", "web-1", "sb-0", 1, now.Add(-time.Hour)), running(p, "db", "db-1", "sb-0")}
			},
			want: Actions{SandboxID: "sb-0", StartContainers: []int{0}, Resize: Resize{PodCgroup: true}},
		},
		{
			name:     "nothing recorded: taken as actuated",
			pod:      func(p *corev1.Pod) { p.Spec.Containers[0].Resources = moreCPU },
			actuated: func() map[string]corev1.ResourceRequirements { return nil },
			want:     Actions{},
		},
		{
			name: "a resized pod whose spec also changed restarts for the spec, no update",
			pod:  func(p *corev1.Pod) { p.Spec.Containers[0].Resources = moreCPU },
			runtime: func(p *corev1.Pod) []runtimestate.Container {
				web := running(p, "web", "web-1", "sb-0")
				web.Hash = 42
				return []runtimestate.Container{web, running(p, "db", "db-1", "sb-0")}
			},
			want: Actions{
				SandboxID: "sb-0", StartContainers: []int{0},
				KillContainers: map[ContainerRef]KillReason{{ID: "web-1", Name: "web"}: {Reason: KillReasonSpecChanged, Message: "Container web definition changed, will be restarted"}},
				Resize:         Resize{PodCgroup: true},
			},
		},
		{
			name: "a container created before resize (hash with resources) is not restarted",
			runtime: func(p *corev1.Pod) []runtimestate.Container {
				web := running(p, "web", "web-1", "sb-0")
				web.Hash = hashWithResources(&p.Spec.Containers[0])
				return []runtimestate.Container{web, running(p, "db", "db-1", "sb-0")}
			},
			want: Actions{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := newPod(corev1.RestartPolicyAlways, nil, []string{"web", "db"})
			pod.Spec.Containers[0].Resources, pod.Spec.Containers[1].Resources = before, before
			if tt.pod != nil {
				tt.pod(pod)
			}
			containers := []runtimestate.Container{running(pod, "web", "web-1", "sb-0"), running(pod, "db", "db-1", "sb-0")}
			if tt.runtime != nil {
				containers = tt.runtime(pod)
			}
			actuated := map[string]corev1.ResourceRequirements{"web": before, "db": before}
			if tt.actuated != nil {
				actuated = tt.actuated()
			}
			got := Compute(Inputs{
				Pod: pod, Runtime: rtPod(sandboxes(readySandbox("sb-0", 0)), containers...), Now: now,
				Actuated: actuated, ActuatedPod: tt.podLevel,
			})
			got.Backoff = nil
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Compute (-want +got):\n%s", diff)
			}
		})
	}
}

// TestComputeResizeSidecar: a running sidecar and a running ordinary init
// container are resized in place; only the sidecar counts for
// InProgress, as upstream.
func TestComputeResizeSidecar(t *testing.T) {
	pod := sidecarPod(corev1.RestartPolicyAlways)
	before, more := resources("20m", "30m", "35Mi", "45Mi"), resources("25m", "35m", "35Mi", "45Mi")
	for i := range pod.Spec.InitContainers {
		pod.Spec.InitContainers[i].Resources = more
	}
	pod.Spec.Containers[0].Resources = before
	actuated := map[string]corev1.ResourceRequirements{"proxy": before, "setup": before, "agent": before, "web": before}
	rt := rtPod(sandboxes(readySandbox("sb-0", 0)), running(pod, "setup", "setup-1", "sb-0"), running(pod, "proxy", "proxy-1", "sb-0"))
	want := Actions{Resize: Resize{
		Containers: []ResizeContainer{
			{ContainerRef: ContainerRef{ID: "setup-1", Name: "setup"}, Init: true, Index: 1},
			{ContainerRef: ContainerRef{ID: "proxy-1", Name: "proxy"}, Init: true},
		},
		PodCgroup: true, InProgress: true,
	}}
	if diff := cmp.Diff(want, Compute(Inputs{Pod: pod, Runtime: rt, Now: at(time.Hour), Actuated: actuated})); diff != "" {
		t.Errorf("Compute (-want +got):\n%s", diff)
	}
	// The ordinary init container alone: updated, not in progress.
	actuated["proxy"] = more
	want = Actions{Resize: Resize{
		Containers: []ResizeContainer{{ContainerRef: ContainerRef{ID: "setup-1", Name: "setup"}, Init: true, Index: 1}},
		PodCgroup:  true,
	}}
	if diff := cmp.Diff(want, Compute(Inputs{Pod: pod, Runtime: rt, Now: at(time.Hour), Actuated: actuated})); diff != "" {
		t.Errorf("Compute (-want +got):\n%s", diff)
	}
}
