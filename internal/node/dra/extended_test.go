package dra

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	drapb "k8s.io/kubelet/pkg/apis/dra/v1"
	podresourcesapi "k8s.io/kubelet/pkg/apis/podresources/v1"
)

const (
	extendedGPU   = "example.com/gpu"
	extendedClass = "deviceclass.resource.kubernetes.io/gpu.example.com"
)

// extendedPod is a pod whose containers ask for DRA-backed extended
// resources, as the scheduler leaves it (status.extendedResourceClaimStatus):
// "ctr" one example.com/gpu (request container-0-request-0), "second" one of
// the device class's implicit name (container-1-request-0), "other"
// nothing; a mapping of "other" whose resource it does not request gives
// it nothing. claim is the extended resource claim's name.
func extendedPod(name, claim string) *corev1.Pod {
	pod := claimPod(name, "")
	one := resource.MustParse("1")
	pod.Spec.ResourceClaims, pod.Status.ResourceClaimStatuses = nil, nil
	pod.Spec.Containers = []corev1.Container{
		{Name: "ctr", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{extendedGPU: one}, Limits: corev1.ResourceList{extendedGPU: one}}},
		{Name: "second", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{extendedClass: one}, Limits: corev1.ResourceList{extendedClass: one}}},
		{Name: "other"},
	}
	pod.Status.ExtendedResourceClaimStatus = &corev1.PodExtendedResourceClaimStatus{
		ResourceClaimName: claim,
		RequestMappings: []corev1.ContainerExtendedResourceRequest{
			{ContainerName: "ctr", ResourceName: extendedGPU, RequestName: "container-0-request-0"},
			{ContainerName: "second", ResourceName: extendedClass, RequestName: "container-1-request-0"},
			{ContainerName: "other", ResourceName: extendedGPU, RequestName: "container-2-request-0"},
		},
	}
	return pod
}

// extendedClaim is the claim the scheduler creates for extendedPod: one
// device per container request, owned by and reserved for the pod.
func extendedClaim(name string, pod *corev1.Pod) *resourceapi.ResourceClaim {
	return extendedClaimOf(name, pod, pod)
}

// extendedClaimOf is extendedClaim with its owner (nil none) and the pod
// it is reserved for.
func extendedClaimOf(name string, owner, reservedFor *corev1.Pod) *resourceapi.ResourceClaim {
	c := allocatedClaim(name, owner, reservedFor)
	c.Status.Allocation.Devices.Results = []resourceapi.DeviceRequestAllocationResult{
		{Request: "container-0-request-0", Driver: testDriver, Pool: testNode, Device: "gpu-0"},
		{Request: "container-1-request-0", Driver: testDriver, Pool: testNode, Device: "gpu-1"},
		{Request: "container-2-request-0", Driver: testDriver, Pool: testNode, Device: "gpu-2"},
	}
	return c
}

func extendedDevices(d *fakeDriver, claim string) {
	d.setDevices(claim,
		&drapb.Device{RequestNames: []string{"container-0-request-0"}, PoolName: testNode, DeviceName: "gpu-0", CdiDeviceIds: []string{"example.com/gpu=gpu-0"}},
		&drapb.Device{RequestNames: []string{"container-1-request-0"}, PoolName: testNode, DeviceName: "gpu-1", CdiDeviceIds: []string{"example.com/gpu=gpu-1"}},
		&drapb.Device{RequestNames: []string{"container-2-request-0"}, PoolName: testNode, DeviceName: "gpu-2", CdiDeviceIds: []string{"example.com/gpu=gpu-2"}},
	)
}

// TestExtendedResourceClaim: the claim of a pod's DRA-backed extended
// resources (status.extendedResourceClaimStatus) is prepared once with
// the pod's other claims, each container gets the CDI devices of the
// requests its extended resources map to, the pod resources API lists the
// claim for the containers mapped, a restart keeps it all from the
// checkpoint without a driver call, and the pod's end unprepares it once.
func TestExtendedResourceClaim(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const claimName = "pod-a-extended-resources-x7k2p"
	pod := extendedPod("pod-a", claimName)
	// The pod also has a claim of its own, from a template.
	pod.Spec.ResourceClaims = claimPod("pod-a", "pod-a-gpu").Spec.ResourceClaims
	pod.Status.ResourceClaimStatuses = claimPod("pod-a", "pod-a-gpu").Status.ResourceClaimStatuses
	pod.Spec.Containers[2].Resources.Claims = []corev1.ResourceClaim{{Name: "gpu"}}
	m, _, _ := testManager(t, dir, extendedClaim(claimName, pod), allocatedClaim("pod-a-gpu", pod, pod))
	d := startDriver(t, drapb.DRAPluginService)
	extendedDevices(d, claimName)
	register(t, m, d, drapb.DRAPluginService)

	if err := m.Prepare(ctx, pod); err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	if err := m.Prepare(ctx, pod); err != nil {
		t.Fatalf("Prepare again: %v", err)
	}
	calls := d.Calls()
	if len(calls) != 1 || calls[0].RPC != "NodePrepareResources" || !cmp.Equal(sorted(calls[0].Claims), []string{claimName, "pod-a-gpu"}) {
		t.Fatalf("calls after two Prepares = %+v, want one NodePrepareResources of both claims", calls)
	}
	wantIDs := map[string][]string{
		"ctr":    {"example.com/gpu=gpu-0"},
		"second": {"example.com/gpu=gpu-1"},
		"other":  {"example.com/test=pod-a-gpu"}, // its own claim; it does not request the mapped resource
	}
	checkIDs := func(m *Manager, when string) {
		t.Helper()
		for i := range pod.Spec.Containers {
			c := &pod.Spec.Containers[i]
			ids, err := m.CDIDevices(pod, c)
			if err != nil || !cmp.Equal(ids, wantIDs[c.Name]) {
				t.Errorf("%s: CDIDevices(%s) = %q, %v; want %q", when, c.Name, ids, err, wantIDs[c.Name])
			}
		}
	}
	checkIDs(m, "after Prepare")

	// The pod resources API: the extended claim, with all its devices, for
	// every container a mapping names (upstream's GetContainerClaimInfos).
	res := m.GetDynamicResources(pod, &pod.Spec.Containers[0])
	if len(res) != 1 || res[0].ClaimName != claimName || len(res[0].ClaimResources) != 3 {
		t.Errorf("GetDynamicResources(ctr) = %v, want the extended claim with its 3 devices", res)
	} else if want := (&podresourcesapi.ClaimResource{DriverName: testDriver, PoolName: testNode, DeviceName: "gpu-0",
		CdiDevices: []*podresourcesapi.CDIDevice{{Name: "example.com/gpu=gpu-0"}}}); res[0].ClaimResources[0].String() != want.String() {
		t.Errorf("GetDynamicResources(ctr) device 0 = %v, want %v", res[0].ClaimResources[0], want)
	}
	if res := m.GetDynamicResources(pod, &pod.Spec.Containers[2]); len(res) != 2 || res[0].ClaimName != "pod-a-gpu" || res[1].ClaimName != claimName {
		t.Errorf("GetDynamicResources(other) = %v, want its own claim, then the extended one", res)
	}

	// berth restarts: the checkpoint has the claim, its pod and devices.
	after, _, _ := testManager(t, dir)
	register(t, after, d, drapb.DRAPluginService)
	if diff := cmp.Diff([]string{string(pod.UID)}, uidStrings(after.HeldPods())); diff != "" {
		t.Errorf("HeldPods after the restart (-want +got):\n%s", diff)
	}
	checkIDs(after, "after the restart")
	if err := after.Unprepare(ctx, pod.UID); err != nil {
		t.Fatalf("Unprepare: %v", err)
	}
	if err := after.Unprepare(ctx, pod.UID); err != nil {
		t.Fatalf("Unprepare again: %v", err)
	}
	calls = d.Calls()
	if len(calls) != 2 || calls[1].RPC != "NodeUnprepareResources" || !cmp.Equal(sorted(calls[1].Claims), []string{claimName, "pod-a-gpu"}) {
		t.Errorf("calls = %+v, want the one prepare, then one NodeUnprepareResources of both claims", calls)
	}
	if held := after.HeldPods(); len(held) != 0 {
		t.Errorf("HeldPods after Unprepare = %v, want none", held)
	}
	if again, _, _ := testManager(t, dir); len(again.HeldPods()) != 0 {
		t.Errorf("a third run holds %v, want nothing", again.HeldPods())
	}
}

// TestExtendedResourceClaimChecks: the extended resource claim must be
// allocated and reserved for the pod, as any other (upstream does not
// check its owner); a pod without the status has no such claim and
// prepares nothing (the scheduler sets it before binding: upstream waits
// for nothing).
func TestExtendedResourceClaimChecks(t *testing.T) {
	ctx := context.Background()
	pod := extendedPod("pod-a", "pod-a-extended-resources-1")
	stranger := claimPod("stranger", "")
	notOwned := extendedClaimOf("pod-a-extended-resources-1", nil, pod)
	notReserved := extendedClaimOf("pod-a-extended-resources-1", pod, stranger)
	notAllocated := extendedClaim("pod-a-extended-resources-1", pod)
	notAllocated.Status.Allocation = nil
	noStatus := extendedPod("pod-a", "")
	noStatus.Status.ExtendedResourceClaimStatus = nil
	for name, tc := range map[string]struct {
		pod   *corev1.Pod
		claim *resourceapi.ResourceClaim
		want  string // "" prepared
		calls int
	}{
		"reserved, not owned":  {pod: pod, claim: notOwned, calls: 1},
		"not reserved":         {pod: pod, claim: notReserved, want: "pod pod-a (uid-pod-a) is not allowed to use ResourceClaim pod-a-extended-resources-1 (uid-pod-a-extended-resources-1)"},
		"not allocated":        {pod: pod, claim: notAllocated, want: "ResourceClaim pod-a-extended-resources-1: not allocated"},
		"claim missing":        {pod: pod, want: `fetch ResourceClaim pod-a-extended-resources-1: resourceclaims.resource.k8s.io "pod-a-extended-resources-1" not found`},
		"no status, no claims": {pod: noStatus},
	} {
		t.Run(name, func(t *testing.T) {
			var objs []any
			if tc.claim != nil {
				objs = append(objs, tc.claim)
			}
			m, _, _ := testManager(t, t.TempDir(), objs...)
			d := startDriver(t, drapb.DRAPluginService)
			register(t, m, d, drapb.DRAPluginService)
			err := m.Prepare(ctx, tc.pod)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Prepare: %v", err)
			case tc.want != "" && (err == nil || err.Error() != "prepare dynamic resources: "+tc.want):
				t.Fatalf("Prepare: %v, want %q", err, tc.want)
			}
			if got := len(d.Calls()); got != tc.calls {
				t.Errorf("driver calls = %d, want %d", got, tc.calls)
			}
			if ids, err := m.CDIDevices(tc.pod, &tc.pod.Spec.Containers[2]); err != nil || len(ids) != 0 {
				t.Errorf("CDIDevices(other) = %q, %v; want none", ids, err)
			}
		})
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	slices.Sort(out)
	return out
}
