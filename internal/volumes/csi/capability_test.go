package csi

import (
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestApplyFSGroup pins upstream's rule (SetUpAt over supportsFSGroup):
// a base case that applies it, and one change a row.
func TestApplyFSGroup(t *testing.T) {
	rwo := []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	base := fsGroupInputs{Policy: storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy, FSGroup: ptr.To(int64(2000)), FSType: "ext4", AccessModes: rwo}
	for _, tc := range []struct {
		name string
		mod  func(*fsGroupInputs)
		want bool
	}{
		{"ReadWriteOnce with an fsType", func(*fsGroupInputs) {}, true},
		{"ReadWriteOncePod", func(in *fsGroupInputs) { in.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod} }, true},
		{"ReadWriteOnce not first", func(in *fsGroupInputs) {
			in.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadOnlyMany, corev1.ReadWriteOnce}
		}, true},
		{"ReadWriteMany only", func(in *fsGroupInputs) { in.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany} }, false},
		{"no access modes", func(in *fsGroupInputs) { in.AccessModes = nil }, false},
		{"no fsType", func(in *fsGroupInputs) { in.FSType = "" }, false},
		{"inline with an fsType", func(in *fsGroupInputs) { in.Inline, in.AccessModes = true, nil }, true},
		{"inline without an fsType", func(in *fsGroupInputs) { in.Inline, in.AccessModes, in.FSType = true, nil, "" }, false},
		{"File: no fsType, ReadWriteMany", func(in *fsGroupInputs) {
			in.Policy, in.FSType, in.AccessModes = storagev1.FileFSGroupPolicy, "", []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
		}, true},
		{"None", func(in *fsGroupInputs) { in.Policy = storagev1.NoneFSGroupPolicy }, false},
		{"no fsGroup", func(in *fsGroupInputs) { in.FSGroup = nil }, false},
		{"read-only", func(in *fsGroupInputs) { in.ReadOnly = true }, false},
		{"File, read-only", func(in *fsGroupInputs) { in.Policy, in.ReadOnly = storagev1.FileFSGroupPolicy, true }, false},
		{"the driver takes the mount group", func(in *fsGroupInputs) { in.MountGroup = true }, false},
		{"File, the driver takes the mount group", func(in *fsGroupInputs) { in.Policy, in.MountGroup = storagev1.FileFSGroupPolicy, true }, false},
	} {
		in := base
		tc.mod(&in)
		if got := applyFSGroup(in); got != tc.want {
			t.Errorf("%s: applyFSGroup = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestAccessMode pins the mapping of upstream's asCSIAccessModeV1 and
// asSingleNodeMultiWriterCapableCSIAccessModeV1 (upstream_test.go reads
// the tables themselves) and the first-mode rule.
func TestAccessMode(t *testing.T) {
	type modes = []corev1.PersistentVolumeAccessMode
	for _, tc := range []struct {
		modes       modes
		plain, snmw csipb.VolumeCapability_AccessMode_Mode
	}{
		{nil, csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER, csipb.VolumeCapability_AccessMode_SINGLE_NODE_MULTI_WRITER},
		{modes{corev1.ReadWriteOnce}, csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER, csipb.VolumeCapability_AccessMode_SINGLE_NODE_MULTI_WRITER},
		{modes{corev1.ReadWriteOncePod}, csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER, csipb.VolumeCapability_AccessMode_SINGLE_NODE_SINGLE_WRITER},
		{modes{corev1.ReadOnlyMany, corev1.ReadWriteOnce}, csipb.VolumeCapability_AccessMode_MULTI_NODE_READER_ONLY, csipb.VolumeCapability_AccessMode_MULTI_NODE_READER_ONLY},
		{modes{corev1.ReadWriteMany}, csipb.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER, csipb.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER},
		{modes{"Bogus"}, csipb.VolumeCapability_AccessMode_UNKNOWN, csipb.VolumeCapability_AccessMode_UNKNOWN},
	} {
		if got := accessMode(tc.modes, false); got != tc.plain {
			t.Errorf("accessMode(%v) = %v, want %v", tc.modes, got, tc.plain)
		}
		if got := accessMode(tc.modes, true); got != tc.snmw {
			t.Errorf("accessMode(%v) with SINGLE_NODE_MULTI_WRITER = %v, want %v", tc.modes, got, tc.snmw)
		}
	}
}

// TestPolicyOf: a missing CSIDriver is upstream's defaults; an object's
// unset fields read as upstream reads them.
func TestPolicyOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    *storagev1.CSIDriver
		want driverPolicy
	}{
		{"no object", nil, driverPolicy{AttachRequired: true, FSGroupPolicy: storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy,
			Modes: []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent}}},
		{"defaulted object", csiDriver(nil), driverPolicy{Exists: true, AttachRequired: true,
			FSGroupPolicy: storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy, Modes: []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent}}},
		{"unset fields", &storagev1.CSIDriver{}, driverPolicy{Exists: true, AttachRequired: true}},
		{"everything set", csiDriver(func(s *storagev1.CSIDriverSpec) {
			s.AttachRequired, s.PodInfoOnMount, s.ServiceAccountTokenInSecrets = ptr.To(false), ptr.To(true), ptr.To(true)
			s.FSGroupPolicy = ptr.To(storagev1.FileFSGroupPolicy)
			s.TokenRequests = []storagev1.TokenRequest{{Audience: "a"}}
			s.RequiresRepublish = ptr.To(true)
		}), driverPolicy{Exists: true, PodInfoOnMount: true, FSGroupPolicy: storagev1.FileFSGroupPolicy,
			Modes:         []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent},
			TokenRequests: []storagev1.TokenRequest{{Audience: "a"}}, TokensInSecrets: true, RequiresRepublish: true}},
	} {
		if diff := cmp.Diff(tc.want, policyOf(tc.d)); diff != "" {
			t.Errorf("%s: policyOf (-want +got):\n%s", tc.name, diff)
		}
	}
}

// csiDriver is testDriver's CSIDriver as the API server defaults it,
// changed by mod.
func csiDriver(mod func(*storagev1.CSIDriverSpec)) *storagev1.CSIDriver {
	d := &storagev1.CSIDriver{
		ObjectMeta: metav1.ObjectMeta{Name: testDriver},
		Spec: storagev1.CSIDriverSpec{
			AttachRequired: ptr.To(true), PodInfoOnMount: ptr.To(false), RequiresRepublish: ptr.To(false),
			StorageCapacity: ptr.To(false), SELinuxMount: ptr.To(false),
			FSGroupPolicy:        ptr.To(storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy),
			VolumeLifecycleModes: []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent},
		},
	}
	if mod != nil {
		mod(&d.Spec)
	}
	return d
}
