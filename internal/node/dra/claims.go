package dra

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/dynamic-resource-allocation/resourceclaim"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// claimKey is how claims are kept, upstream's: namespace/name.
func claimKey(namespace, name string) string { return namespace + "/" + name }

// claimEntry is a claim in the cache: its checkpointed state, and (not
// checkpointed, as upstream's) whether it is prepared in this run and
// whether its last pod is unpreparing it.
type claimEntry struct {
	ClaimState
	prepared    bool
	unpreparing bool
}

// errSkipNodeOperations is upstream's refusal of a claim whose results
// skip node operations while its gate DRAOptionalNodeOperations (alpha,
// off) is off.
var errSkipNodeOperations = errors.New("DRAOptionalNodeOperations feature gate is disabled on kubelet")

// claimStateOf is a new entry for an allocated claim: one DriverState per
// driver with allocation results, without devices yet (upstream's
// newClaimInfoFromClaim).
func claimStateOf(claim *resourceapi.ResourceClaim) (ClaimState, error) {
	if claim.Status.Allocation == nil {
		return ClaimState{}, errors.New("not allocated")
	}
	drivers := map[string]DriverState{}
	for _, r := range claim.Status.Allocation.Devices.Results {
		if len(r.SkipNodeOperations) > 0 {
			return ClaimState{}, errSkipNodeOperations
		}
		drivers[r.Driver] = DriverState{}
	}
	return ClaimState{ClaimUID: claim.UID, ClaimName: claim.Name, Namespace: claim.Namespace,
		PodUIDs: map[string]struct{}{}, DriverState: drivers}, nil
}

// podClaimNames are the names of the ResourceClaims the pod's
// spec.resourceClaims stand for, by the pod's claim name, in spec order;
// a claim a template produced comes from status.resourceClaimStatuses
// (none there: not created yet, an error; a nil name: none needed, left
// out). mustCheckOwner marks the generated ones, which the pod must own.
func podClaimNames(pod *corev1.Pod) ([]podClaim, error) {
	out := make([]podClaim, 0, len(pod.Spec.ResourceClaims))
	for i := range pod.Spec.ResourceClaims {
		pc := &pod.Spec.ResourceClaims[i]
		name, mustCheckOwner, err := resourceclaim.Name(pod, pc)
		if err != nil {
			return nil, err
		}
		if name == nil {
			continue
		}
		out = append(out, podClaim{podName: pc.Name, name: *name, mustCheckOwner: mustCheckOwner})
	}
	return out, nil
}

// claimsToPrepare are the pod's claims to prepare, upstream's: those of
// spec.resourceClaims (podClaimNames), then the claim the scheduler
// allocated for its DRA-backed extended resources
// (status.extendedResourceClaimStatus), which has no name in the pod and,
// as upstream, is not checked for an owner (only that it is reserved for
// the pod). No status is no extended claim: the scheduler sets it before
// it binds the pod, so a pod the kubelet sees without it has none (upstream
// does not wait for it either).
func claimsToPrepare(pod *corev1.Pod) ([]podClaim, error) {
	pcs, err := podClaimNames(pod)
	if err != nil {
		return nil, err
	}
	if name, ok := podutil.ExtendedResourceClaimName(pod); ok {
		pcs = append(pcs, podClaim{name: name})
	}
	return pcs, nil
}

// podClaim is one of a pod's claims: its name in the pod (none for the
// extended resource claim), the claim's name, and whether it was generated
// for the pod.
type podClaim struct {
	podName, name  string
	mustCheckOwner bool
}

// checkClaimForPod says why the pod may not use the claim: a generated
// claim the pod does not own, or one not reserved for it (upstream's
// messages).
func checkClaimForPod(pod *corev1.Pod, pc podClaim, claim *resourceapi.ResourceClaim) error {
	if pc.mustCheckOwner {
		if err := resourceclaim.IsForPod(pod, claim, false); err != nil {
			return err
		}
	}
	if !resourceclaim.IsReservedForPod(pod, claim, false) {
		return fmt.Errorf("pod %s (%s) is not allowed to use ResourceClaim %s (%s)", pod.Name, pod.UID, pc.name, claim.UID)
	}
	return nil
}
