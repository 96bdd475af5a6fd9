package volume

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/volumes/csi"
)

// blockClaim makes expandEnv's volume pv1 one of volumeMode Block.
func blockClaim(pvc *corev1.PersistentVolumeClaim, pv *corev1.PersistentVolume) {
	pv.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeBlock)
	pvc.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeBlock)
}

// TestBlockOnlineExpansion: a mapped CSI block volume whose
// PersistentVolume the resize controller grew is expanded on the node at
// the next refresh, as a block volume online (upstream's
// GenerateExpandInUseVolumeFunc for a volume that is no filesystem), with
// the claim's status and events as for a filesystem; nothing is mapped
// again.
func TestBlockOnlineExpansion(t *testing.T) {
	x := newExpandEnv(t, blockClaim)
	ctx := context.Background()
	pod := blockPod(false)
	pod.Spec.NodeName = "node"
	if _, err := x.m.SetUp(ctx, pod); err != nil {
		t.Fatal(err)
	}
	x.m.refresh(ctx, false)
	if calls := x.exp.calls(); len(calls) != 0 {
		t.Fatalf("expansions before any resize: %v", calls)
	}
	x.resize(t, gi2)
	x.m.refresh(ctx, false)
	x.m.refresh(ctx, false)
	if diff := cmp.Diff([]string{"pv1=2Gi"}, x.exp.calls()); diff != "" {
		t.Errorf("expansions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"block online"}, x.exp.kindsOf()); diff != "" {
		t.Errorf("expansion kinds (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(finished(gi2), x.claim(t).Status, ignoreEmpty); diff != "" {
		t.Errorf("claim status (-want +got):\n%s", diff)
	}
	msg := `Normal FileSystemResizeSuccessful MountVolume.NodeExpandVolume succeeded for volume "pv1" node`
	if diff := cmp.Diff([]string{msg}, x.events.messages); diff != "" {
		t.Errorf("pod events (-want +got):\n%s", diff)
	}
	if len(x.csi.maps) != 1 || len(x.csi.setUps) != 0 {
		t.Errorf("%d maps and %d filesystem set-ups, want one map", len(x.csi.maps), len(x.csi.setUps))
	}
}

// TestBlockExpansionAtMap: a CSI block volume whose PersistentVolume is
// larger than the claim's status capacity is expanded right after its
// map (upstream's GenerateMapVolumeFunc, expandVolumeDuringMount); a
// failure fails the set-up with upstream's FailedMapVolume message
// ("MapVolume.MarkVolumeAsMounted failed while expanding volume") and
// the next set-up maps and expands again; a read-only claim is not
// expanded.
func TestBlockExpansionAtMap(t *testing.T) {
	grown := func(pvc *corev1.PersistentVolumeClaim, pv *corev1.PersistentVolume) {
		blockClaim(pvc, pv)
		pv.Spec.Capacity = storage(gi2)
		pvc.Spec.Resources.Requests = storage(gi2)
		pvc.Status.AllocatedResources = storage(gi2)
		pvc.Status.AllocatedResourceStatuses = map[corev1.ResourceName]corev1.ClaimResourceStatus{
			corev1.ResourceStorage: corev1.PersistentVolumeClaimNodeResizePending,
		}
	}
	t.Run("expanded", func(t *testing.T) {
		x := newExpandEnv(t, grown)
		x.exp.err = &csi.ExpandError{Failure: csi.ExpandFailed, Err: fmt.Errorf("not yet")}
		ctx := context.Background()
		pod := blockPod(false)
		_, err := x.m.SetUp(ctx, pod)
		want := `MapVolume.MarkVolumeAsMounted failed while expanding volume for volume "pv1" : not yet`
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("SetUp() = %v, want %q", err, want)
		}
		if diff := cmp.Diff([]string{"Warning FailedMapVolume " + want}, x.events.messages); diff != "" {
			t.Errorf("pod events (-want +got):\n%s", diff)
		}
		x.exp.err = nil
		if _, err := x.m.SetUp(ctx, pod); err != nil {
			t.Fatal(err)
		}
		if len(x.csi.maps) != 2 {
			t.Errorf("%d maps, want 2 (the failed expansion maps again)", len(x.csi.maps))
		}
		if diff := cmp.Diff([]string{"block at mount", "block at mount"}, x.exp.kindsOf()); diff != "" {
			t.Errorf("expansions (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(finished(gi2), x.claim(t).Status, ignoreEmpty); diff != "" {
			t.Errorf("claim status (-want +got):\n%s", diff)
		}
		x.m.refresh(ctx, false)
		if n := len(x.exp.calls()); n != 2 {
			t.Errorf("%d expansions after a refresh, want still 2", n)
		}
	})
	t.Run("read-only", func(t *testing.T) {
		x := newExpandEnv(t, grown)
		if _, err := x.m.SetUp(context.Background(), blockPod(true)); err != nil {
			t.Fatal(err)
		}
		if calls := x.exp.calls(); len(calls) != 0 {
			t.Errorf("expansions of a read-only claim: %v", calls)
		}
		msg := `Warning FileSystemResizeFailed MountVolume.NodeExpandVolume failed for volume "pv1" requested read-only file system`
		if diff := cmp.Diff([]string{msg}, x.events.messages); diff != "" {
			t.Errorf("pod events (-want +got):\n%s", diff)
		}
	})
}
