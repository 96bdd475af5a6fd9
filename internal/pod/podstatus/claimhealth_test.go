package podstatus

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

// TestGenerateClaimHealth: a pod with two claims and an init container
// that uses one. The DRA manager's entries join the device plugins' in
// each regular container that names claims, as upstream's DRA
// UpdateAllocatedResourcesStatus merges them (replaced by name or added,
// then every entry without resources dropped); a container naming no
// claim keeps its device entries as they are; init containers get none
// (upstream sets containerStatuses only).
func TestGenerateClaimHealth(t *testing.T) {
	healthy := func(id string) corev1.ResourceHealth {
		return corev1.ResourceHealth{ResourceID: corev1.ResourceID(id), Health: corev1.ResourceHealthStatusHealthy}
	}
	unhealthy := corev1.ResourceHealth{ResourceID: "gpu=0", Health: corev1.ResourceHealthStatusUnhealthy, Message: new("ECC")}
	devs := corev1.ResourceStatus{Name: "example.com/dev", Resources: []corev1.ResourceHealth{healthy("dev-a")}}
	gpus := corev1.ResourceStatus{Name: "claim:gpus", Resources: []corev1.ResourceHealth{unhealthy, healthy("gpu=1")}}
	nicOnly := corev1.ResourceStatus{Name: "claim:nic/eth", Resources: []corev1.ResourceHealth{healthy("nic=eth1")}}
	emptyNIC := corev1.ResourceStatus{Name: "claim:nic/eth", Resources: []corev1.ResourceHealth{}}

	base := func() Input {
		pod := staticPod("app", "side", "plain")
		pod.Spec.InitContainers = []corev1.Container{{Name: "init", Resources: corev1.ResourceRequirements{Claims: []corev1.ResourceClaim{{Name: "gpus"}}}}}
		pod.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpus"}, {Name: "nic"}}
		pod.Spec.Containers[0].Resources.Claims = []corev1.ResourceClaim{{Name: "gpus"}, {Name: "nic", Request: "eth"}}
		pod.Spec.Containers[1].Resources.Claims = []corev1.ResourceClaim{{Name: "nic", Request: "eth"}}
		return Input{
			Pod:     pod,
			Runtime: rt(sbs(readySandbox("10.244.0.5")), exited("init", "c0", 0, "Completed", 0), running("app", "c1", 0), running("side", "c2", 0), running("plain", "c3", 0)),
			Now:     now,
		}
	}
	for _, tc := range []struct {
		name    string
		mutate  func(in *Input)
		want    map[string][]corev1.ResourceStatus
		wantIni []corev1.ResourceStatus
	}{
		{"no health", func(*Input) {}, map[string][]corev1.ResourceStatus{}, nil},
		{"claims after the device plugins' entries, in the container's order", func(in *Input) {
			in.ResourceHealth = map[string][]corev1.ResourceStatus{"app": {devs}, "plain": {devs}}
			in.ClaimHealth = map[string][]corev1.ResourceStatus{"app": {gpus, nicOnly}, "side": {nicOnly}}
		}, map[string][]corev1.ResourceStatus{"app": {devs, gpus, nicOnly}, "side": {nicOnly}, "plain": {devs}}, nil},
		{"an entry without resources is dropped", func(in *Input) {
			in.ResourceHealth = map[string][]corev1.ResourceStatus{"app": {devs}}
			in.ClaimHealth = map[string][]corev1.ResourceStatus{"app": {gpus, emptyNIC}, "side": {emptyNIC}}
		}, map[string][]corev1.ResourceStatus{"app": {devs, gpus}}, nil},
		{"the init container's claim health is not shown", func(in *Input) {
			in.ClaimHealth = map[string][]corev1.ResourceStatus{"init": {gpus}}
		}, map[string][]corev1.ResourceStatus{}, nil},
		{"a container naming no claim ignores claim entries", func(in *Input) {
			in.ClaimHealth = map[string][]corev1.ResourceStatus{"plain": {gpus}}
		}, map[string][]corev1.ResourceStatus{}, nil},
		{"the same name twice: the last one", func(in *Input) {
			in.ClaimHealth = map[string][]corev1.ResourceStatus{"side": {emptyNIC, nicOnly}}
		}, map[string][]corev1.ResourceStatus{"side": {nicOnly}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := base()
			tc.mutate(&in)
			s := Generate(in)
			got := map[string][]corev1.ResourceStatus{}
			for _, c := range s.ContainerStatuses {
				if c.AllocatedResourcesStatus != nil {
					got[c.Name] = c.AllocatedResourcesStatus
				}
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("containerStatuses' allocatedResourcesStatus (-want +got):\n%s", d)
			}
			for _, c := range s.InitContainerStatuses {
				if c.AllocatedResourcesStatus != nil {
					t.Errorf("init container %s has allocatedResourcesStatus %v, want none", c.Name, c.AllocatedResourcesStatus)
				}
			}
		})
	}
}
