package dra

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/dynamic-resource-allocation/resourceclaim"
	drapb "k8s.io/kubelet/pkg/apis/dra/v1"
	podresourcesapi "k8s.io/kubelet/pkg/apis/podresources/v1"
)

func TestPrepareAndUnprepareWithTheDriver(t *testing.T) {
	ctx := context.Background()
	pod := claimPod("pod-a", "pod-a-gpu")
	other := sharedPod("pod-b", "pod-a-gpu")
	m, _, _ := testManager(t, t.TempDir(), allocatedClaim("pod-a-gpu", pod, pod, other))
	d := startDriver(t, drapb.DRAPluginService)
	register(t, m, d, drapb.DRAPluginService)

	if err := m.Prepare(ctx, pod); err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	want := []call{{RPC: "NodePrepareResources", Service: drapb.DRAPluginService, Claims: []string{"pod-a-gpu"}}}
	if diff := cmp.Diff(want, d.Calls()); diff != "" {
		t.Fatalf("calls after Prepare (-want +got):\n%s", diff)
	}
	ids, err := m.CDIDevices(pod, &pod.Spec.Containers[0])
	if err != nil || !cmp.Equal(ids, []string{"example.com/test=pod-a-gpu"}) {
		t.Errorf("CDIDevices(ctr) = %q, %v; want the claim's CDI ID", ids, err)
	}
	if ids, err := m.CDIDevices(pod, &pod.Spec.Containers[1]); err != nil || len(ids) != 0 {
		t.Errorf("CDIDevices(other) = %q, %v; want none: it names no claim", ids, err)
	}
	wantRes := []*podresourcesapi.DynamicResource{{ClaimName: "pod-a-gpu", ClaimNamespace: testNS, ClaimResources: []*podresourcesapi.ClaimResource{{
		DriverName: testDriver, PoolName: testNode, DeviceName: "dev-pod-a-gpu", CdiDevices: []*podresourcesapi.CDIDevice{{Name: "example.com/test=pod-a-gpu"}},
	}}}}
	if diff := cmp.Diff(wantRes, m.GetDynamicResources(pod, &pod.Spec.Containers[0]), cmp.Comparer(func(a, b *podresourcesapi.DynamicResource) bool {
		return a.String() == b.String()
	})); diff != "" {
		t.Errorf("GetDynamicResources (-want +got):\n%s", diff)
	}

	// A second pod of the same claim: prepared already, no driver call.
	if err := m.Prepare(ctx, other); err != nil {
		t.Fatalf("Prepare(second pod): %v", err)
	}
	if got := len(d.Calls()); got != 1 {
		t.Errorf("driver calls after the second pod's Prepare = %d, want 1", got)
	}
	// The first pod leaves: the claim stays for the second.
	if err := m.Unprepare(ctx, pod.UID); err != nil {
		t.Fatalf("Unprepare(first): %v", err)
	}
	if got := len(d.Calls()); got != 1 {
		t.Errorf("driver calls after the first pod's Unprepare = %d, want 1", got)
	}
	if err := m.Unprepare(ctx, other.UID); err != nil {
		t.Fatalf("Unprepare(second): %v", err)
	}
	want = append(want, call{RPC: "NodeUnprepareResources", Service: drapb.DRAPluginService, Claims: []string{"pod-a-gpu"}})
	if diff := cmp.Diff(want, d.Calls()); diff != "" {
		t.Errorf("calls after both Unprepares (-want +got):\n%s", diff)
	}
	if held := m.HeldPods(); len(held) != 0 {
		t.Errorf("HeldPods after both Unprepares = %v, want none", held)
	}
	if err := m.Unprepare(ctx, other.UID); err != nil || len(d.Calls()) != 2 {
		t.Errorf("Unprepare of a pod holding nothing: %v, %d calls; want nil, no call", err, len(d.Calls()))
	}
}

// TestPodWaitsForItsClaims: a pod whose claim is not generated yet, not
// allocated, not reserved for it or not its own fails Prepare with
// upstream's error, calls no driver and records nothing.
func TestPodWaitsForItsClaims(t *testing.T) {
	pod := claimPod("pod-a", "pod-a-gpu")
	stranger := &corev1.Pod{}
	stranger.Name, stranger.UID = "stranger", types.UID("uid-stranger")
	notAllocated := allocatedClaim("pod-a-gpu", pod, pod)
	notAllocated.Status.Allocation = nil
	noStatus := claimPod("pod-a", "pod-a-gpu")
	noStatus.Status.ResourceClaimStatuses = nil
	for name, tc := range map[string]struct {
		pod   *corev1.Pod
		claim any
		want  string
		is    error
	}{
		"no claim generated yet": {pod: noStatus, claim: allocatedClaim("pod-a-gpu", pod, pod), is: resourceclaim.ErrClaimNotFound},
		"claim missing":          {pod: pod, claim: nil, want: `fetch ResourceClaim pod-a-gpu: resourceclaims.resource.k8s.io "pod-a-gpu" not found`},
		"not allocated":          {pod: pod, claim: notAllocated, want: "ResourceClaim pod-a-gpu: not allocated"},
		"not reserved":           {pod: pod, claim: allocatedClaim("pod-a-gpu", pod, stranger), want: "pod pod-a (uid-pod-a) is not allowed to use ResourceClaim pod-a-gpu (uid-pod-a-gpu)"},
		"not the pod's":          {pod: pod, claim: allocatedClaim("pod-a-gpu", stranger, pod), want: "was not created for Pod default/pod-a (Pod is not owner)"},
	} {
		t.Run(name, func(t *testing.T) {
			m, _, _ := testManager(t, t.TempDir(), tc.claim)
			d := startDriver(t, drapb.DRAPluginService)
			register(t, m, d, drapb.DRAPluginService)
			err := m.Prepare(context.Background(), tc.pod)
			switch {
			case err == nil:
				t.Fatal("Prepare succeeded, want it to wait")
			case tc.is != nil && !errors.Is(err, tc.is):
				t.Errorf("Prepare: %v, want %v", err, tc.is)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Errorf("Prepare: %v, want it to say %q", err, tc.want)
			}
			if !strings.HasPrefix(err.Error(), "prepare dynamic resources: ") {
				t.Errorf("Prepare: %v, want upstream's prefix", err)
			}
			if len(d.Calls()) != 0 || len(m.HeldPods()) != 0 {
				t.Errorf("calls %v, held %v; want none", d.Calls(), m.HeldPods())
			}
		})
	}
}

func TestPrepareFailures(t *testing.T) {
	ctx := context.Background()
	pod := claimPod("pod-a", "pod-a-gpu")
	t.Run("driver not registered", func(t *testing.T) {
		m, _, _ := testManager(t, t.TempDir(), allocatedClaim("pod-a-gpu", pod, pod))
		err := m.Prepare(ctx, pod)
		if err == nil || !strings.Contains(err.Error(), "DRA driver "+testDriver+" is not registered") {
			t.Errorf("Prepare: %v, want the driver not registered", err)
		}
	})
	t.Run("driver refuses, then prepares", func(t *testing.T) {
		m, _, _ := testManager(t, t.TempDir(), allocatedClaim("pod-a-gpu", pod, pod))
		d := startDriver(t, drapb.DRAPluginService)
		register(t, m, d, drapb.DRAPluginService)
		d.setFail("no such device")
		err := m.Prepare(ctx, pod)
		if err == nil || !strings.Contains(err.Error(), "NodePrepareResources failed for ResourceClaim pod-a-gpu: no such device") {
			t.Fatalf("Prepare: %v, want the driver's error", err)
		}
		if _, err := m.CDIDevices(pod, &pod.Spec.Containers[0]); err != nil {
			t.Errorf("CDIDevices after a failed prepare: %v (the claim is known, without devices)", err)
		}
		d.setFail("")
		if err := m.Prepare(ctx, pod); err != nil {
			t.Fatalf("Prepare again: %v", err)
		}
		if got := len(d.Calls()); got != 2 {
			t.Errorf("driver calls = %d, want 2 (the failed one is not prepared)", got)
		}
	})
	t.Run("no API server", func(t *testing.T) {
		if _, err := New(Config{StateDir: t.TempDir(), Clock: nil}); err == nil {
			t.Fatal("New without a clock succeeded")
		}
		m, err := New(Config{StateDir: t.TempDir(), Clock: fakeClock()})
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Prepare(ctx, pod); err == nil || !strings.Contains(err.Error(), "standalone") {
			t.Errorf("Prepare without a client: %v, want standalone refused", err)
		}
		plain := &corev1.Pod{}
		if err := m.Prepare(ctx, plain); err != nil {
			t.Errorf("Prepare of a pod without claims: %v", err)
		}
	})
	t.Run("claim unpreparing is not taken up", func(t *testing.T) {
		other := sharedPod("pod-b", "pod-a-gpu")
		m, _, _ := testManager(t, t.TempDir(), allocatedClaim("pod-a-gpu", pod, pod, other))
		d := startDriver(t, drapb.DRAPluginService)
		register(t, m, d, drapb.DRAPluginService)
		if err := m.Prepare(ctx, pod); err != nil {
			t.Fatal(err)
		}
		d.setFail("busy")
		if err := m.Unprepare(ctx, pod.UID); err == nil {
			t.Fatal("Unprepare succeeded against a failing driver")
		}
		if err := m.Prepare(ctx, other); err == nil || !strings.Contains(err.Error(), "ResourceClaim pod-a-gpu is being unprepared") {
			t.Errorf("Prepare of another pod during the unprepare: %v", err)
		}
		d.setFail("")
		m.Forget(ctx, pod.UID)
		if held := m.HeldPods(); len(held) != 0 {
			t.Errorf("HeldPods after Forget = %v, want none", held)
		}
	})
}

func TestCDIDevicesOfRequests(t *testing.T) {
	e := &claimEntry{ClaimState: ClaimState{DriverState: map[string]DriverState{
		"b.example.com": {Devices: []Device{{RequestNames: []string{"r1"}, CDIDeviceIDs: []string{"b=1"}}}},
		"a.example.com": {Devices: []Device{
			{RequestNames: []string{"r1"}, CDIDeviceIDs: []string{"a=1"}},
			{RequestNames: []string{"r2"}, CDIDeviceIDs: []string{"a=2"}},
			{CDIDeviceIDs: []string{"a=any"}},
		}},
	}}}
	for req, want := range map[string][]string{
		"":   {"a=1", "a=2", "a=any", "b=1"},
		"r1": {"a=1", "a=any", "b=1"},
		"r2": {"a=2", "a=any"},
		"r3": {"a=any"},
	} {
		if got := e.cdiIDs(req); !cmp.Equal(got, want) {
			t.Errorf("cdiIDs(%q) = %q, want %q", req, got, want)
		}
	}
	pod := claimPod("pod-a", "pod-a-gpu")
	pod.Spec.Containers[0].Resources.Claims = []corev1.ResourceClaim{{Name: "gpu", Request: "r1"}}
	got, err := containerRequests(pod, &pod.Spec.Containers[0])
	if err != nil || !cmp.Equal(got, map[string][]string{"pod-a-gpu": {"r1"}}) {
		t.Errorf("containerRequests = %v, %v", got, err)
	}
	pod.Status.ResourceClaimStatuses[0].ResourceClaimName = nil
	if got, err := containerRequests(pod, &pod.Spec.Containers[0]); err != nil || len(got) != 0 {
		t.Errorf("containerRequests of a claim not needed = %v, %v; want none", got, err)
	}
}
