package csi

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// TestVolumesInUse: a persistent volume of a driver that requires attach
// is in use from its publication until its tear-down, across pods (once),
// and found again by a new Mounter (berth restarted); a driver that needs
// no attach, and an inline volume, are never reported.
func TestVolumesInUse(t *testing.T) {
	for _, tc := range []struct {
		name   string
		attach bool
		inline bool
		want   []corev1.UniqueVolumeName
	}{
		{"attachable", true, false, []corev1.UniqueVolumeName{"kubernetes.io/csi/" + testDriver + "^" + testHandle}},
		{"no attach", false, false, []corev1.UniqueVolumeName{}},
		{"inline", true, true, []corev1.UniqueVolumeName{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objects := []runtime.Object{
				csiDriver(func(s *storagev1.CSIDriverSpec) {
					s.AttachRequired = ptr.To(tc.attach)
					s.VolumeLifecycleModes = []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent, storagev1.VolumeLifecycleEphemeral}
				}),
				secret("kube-system", "publish", nil), secret("kube-system", "stage", nil),
				attachment(testHandle, true, nil),
			}
			e := newMounterEnv(t, stageCaps(), objects...)
			ctx := testContext(t)
			v := testPV()
			if tc.inline {
				v = Volume{SpecName: "scratch", Driver: testDriver, Inline: true}
			}
			inUse := func(m *Mounter) []corev1.UniqueVolumeName {
				t.Helper()
				got, err := m.VolumesInUse(ctx)
				if err != nil {
					t.Fatal(err)
				}
				return got
			}
			if got := inUse(e.m); len(got) != 0 || got == nil {
				t.Fatalf("in use before any publication: %#v, want an empty list", got)
			}
			for _, uid := range []string{"pod-a", "pod-b"} {
				if _, err := e.m.SetUp(ctx, testPod(uid), v); err != nil {
					t.Fatal(err)
				}
			}
			if diff := cmp.Diff(tc.want, inUse(e.m)); diff != "" {
				t.Errorf("in use (-want +got):\n%s", diff)
			}
			restarted, err := NewMounter(e.m.cfg)
			if err != nil {
				t.Fatal(err)
			}
			runMounter(t, restarted)
			if diff := cmp.Diff(tc.want, inUse(restarted)); diff != "" {
				t.Errorf("in use after a restart (-want +got):\n%s", diff)
			}
			for _, uid := range []string{"pod-a", "pod-b"} {
				if err := e.m.TearDown(ctx, e.target(uid, v.SpecName)); err != nil {
					t.Fatal(err)
				}
			}
			if got := inUse(e.m); len(got) != 0 {
				t.Errorf("in use after every tear-down: %v", got)
			}
		})
	}
}
