package csi

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/utils/ptr"
)

// TestRepublish: a volume of a driver with requiresRepublish is published
// again, not staged again, with fresh tokens; a driver without it is not
// asked anything.
func TestRepublish(t *testing.T) {
	for _, again := range []bool{true, false} {
		driver := csiDriver(func(s *storagev1.CSIDriverSpec) {
			s.RequiresRepublish = ptr.To(again)
			s.TokenRequests = []storagev1.TokenRequest{{Audience: "vault"}}
		})
		e := newMounterEnv(t, stageCaps(), driver, attachment(testHandle, true, nil),
			secret("kube-system", "stage", map[string]string{"k": "s"}), secret("kube-system", "publish", map[string]string{"k": "p"}))
		pod := testPod(testPodUID)
		if _, err := e.m.SetUp(testContext(t), pod, testPV()); err != nil {
			t.Fatal(err)
		}
		before := len(e.drv.Methods())
		did, err := e.m.Republish(testContext(t), pod, testPV())
		if err != nil || did != again {
			t.Fatalf("requiresRepublish %v: Republish = %v, %v; want %v", again, did, err, again)
		}
		want := []string{"NodeGetCapabilities", "NodePublishVolume"}
		if !again {
			want = []string{}
		}
		if diff := cmp.Diff(want, e.drv.Methods()[before:]); diff != "" {
			t.Errorf("requiresRepublish %v: calls (-want +got):\n%s", again, diff)
		}
		if n := len(tokenRequests(e)); again && n != 2 {
			t.Errorf("%d token requests, want one for the publish and one for the republish", n)
		}
	}
}
