package csi

import (
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/utils/ptr"
)

// noAttach is a CSIDriver whose volumes need no attach.
func noAttach() *storagev1.CSIDriver {
	return csiDriver(func(s *storagev1.CSIDriverSpec) { s.AttachRequired = ptr.To(false) })
}

// TestPublishFailure: a failure of NodePublishVolume that is final takes
// the target's vol_data.json and parent away again (the staged volume
// stays); an uncertain one, or one of a republish, leaves them for the
// tear-down.
func TestPublishFailure(t *testing.T) {
	for _, tc := range []struct {
		name      string
		code      codes.Code
		republish bool
		uncertain bool
	}{
		{name: "final", code: codes.InvalidArgument},
		{name: "final, internal", code: codes.Internal},
		{name: "timed out", code: codes.DeadlineExceeded, uncertain: true},
		{name: "unavailable", code: codes.Unavailable, uncertain: true},
		{name: "aborted", code: codes.Aborted, uncertain: true},
		{name: "republish", code: codes.InvalidArgument, republish: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newMounterEnv(t, stageCaps(), noAttach(), secret("kube-system", "stage", nil), secret("kube-system", "publish", nil))
			ctx, pod := testContext(t), testPod("a")
			if tc.republish {
				if _, err := e.m.SetUp(ctx, pod, testPV()); err != nil {
					t.Fatal(err)
				}
			}
			e.drv.Fail("NodePublishVolume", status.Error(tc.code, "no luck"))
			_, err := e.m.SetUp(ctx, pod, testPV())
			if err == nil || !strings.Contains(err.Error(), "no luck") {
				t.Fatalf("SetUp error %v, want the driver's", err)
			}
			if got := IsUncertain(err); got != tc.uncertain {
				t.Errorf("IsUncertain = %v, want %v", got, tc.uncertain)
			}
			kept := tc.uncertain || tc.republish
			volDir := filepath.Dir(e.target("a", testPVName))
			if got := exists(t, filepath.Join(volDir, "vol_data.json")); got != kept {
				t.Errorf("vol_data.json there: %v, want %v", got, kept)
			}
			if got := exists(t, volDir); got != kept {
				t.Errorf("%s there: %v, want %v", volDir, got, kept)
			}
			if !exists(t, filepath.Join(filepath.Dir(e.staging(testHandle)), "vol_data.json")) {
				t.Error("the staged volume's vol_data.json went with the failed publish")
			}
		})
	}
}

// TestStageFailure: a final failure of NodeStageVolume takes the staging
// directory away again unless the volume was staged before; nothing is
// published.
func TestStageFailure(t *testing.T) {
	for _, tc := range []struct {
		name          string
		code          codes.Code
		stagedBefore  bool
		keep, uncertn bool
	}{
		{name: "final", code: codes.FailedPrecondition},
		{name: "uncertain", code: codes.DeadlineExceeded, keep: true, uncertn: true},
		{name: "staged before", code: codes.FailedPrecondition, stagedBefore: true, keep: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newMounterEnv(t, stageCaps(), noAttach(), secret("kube-system", "stage", nil), secret("kube-system", "publish", nil))
			ctx := testContext(t)
			if tc.stagedBefore {
				if _, err := e.m.SetUp(ctx, testPod("a"), testPV()); err != nil {
					t.Fatal(err)
				}
			}
			publishes := len(e.drv.CallsTo("NodePublishVolume"))
			e.drv.Fail("NodeStageVolume", status.Error(tc.code, "no luck"))
			_, err := e.m.SetUp(ctx, testPod("b"), testPV())
			if err == nil || IsUncertain(err) != tc.uncertn {
				t.Fatalf("SetUp error %v (uncertain %v), want an error, uncertain %v", err, IsUncertain(err), tc.uncertn)
			}
			if got := exists(t, filepath.Dir(e.staging(testHandle))); got != tc.keep {
				t.Errorf("staging directory there: %v, want %v", got, tc.keep)
			}
			if got := len(e.drv.CallsTo("NodePublishVolume")); got != publishes {
				t.Errorf("published after the stage failed")
			}
			if exists(t, filepath.Dir(e.target("b", testPVName))) {
				t.Error("pod b's volume directory made")
			}
		})
	}
}

// TestSetUpMissingSecret: upstream's message; nothing published, no
// volume directory made.
func TestSetUpMissingSecret(t *testing.T) {
	e := newMounterEnv(t, stageCaps(), noAttach(), secret("kube-system", "stage", nil))
	_, err := e.m.SetUp(testContext(t), testPod("a"), testPV())
	want := "fetching NodePublishSecretRef kube-system/publish failed: kubernetes.io/csi: failed to find the secret publish in the namespace kube-system with error: "
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("SetUp error %v, want one saying %q", err, want)
	}
	if calls := e.drv.CallsTo("NodePublishVolume"); len(calls) != 0 {
		t.Errorf("published: %v", calls)
	}
	if dir := filepath.Dir(e.target("a", testPVName)); exists(t, dir) {
		t.Errorf("%s made", dir)
	}
}
