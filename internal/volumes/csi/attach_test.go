package csi

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
)

// attachScript answers the reads of the volume's VolumeAttachment with
// answers in turn (nil: not found), the last one from then on, and counts
// the reads.
type attachScript struct {
	mu      sync.Mutex
	answers []*storagev1.VolumeAttachment
	reads   int
	// onRead, when set, runs at each read with its number (1 first).
	onRead func(n int)
}

func (s *attachScript) react(a k8stesting.Action) (bool, runtime.Object, error) {
	if a.GetVerb() != "get" {
		return false, nil, nil
	}
	s.mu.Lock()
	s.reads++
	n := s.reads
	va := s.answers[min(n, len(s.answers))-1]
	onRead := s.onRead
	s.mu.Unlock()
	if onRead != nil {
		onRead(n)
	}
	if va == nil {
		return true, nil, apierrors.NewNotFound(storagev1.Resource("volumeattachments"), a.(k8stesting.GetAction).GetName())
	}
	return true, va.DeepCopy(), nil
}

func (s *attachScript) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reads
}

// TestSetUpWaitsForAttachment: the VolumeAttachment named as upstream
// names it is read again until it is attached; its metadata is the
// publish context of stage and publish.
func TestSetUpWaitsForAttachment(t *testing.T) {
	e := newMounterEnv(t, stageCaps(), csiDriver(nil), secret("kube-system", "stage", nil), secret("kube-system", "publish", nil))
	metadata := map[string]string{"lun": "3"}
	script := &attachScript{answers: []*storagev1.VolumeAttachment{
		nil, attachment(testHandle, false, nil), attachment(testHandle, true, metadata),
	}}
	e.client.PrependReactor("get", "volumeattachments", script.react)
	if _, err := e.m.SetUp(testContext(t), testPod(testPodUID), testPV()); err != nil {
		t.Fatal(err)
	}
	if script.count() != 3 {
		t.Errorf("VolumeAttachment read %d times, want 3 (missing, not attached, attached)", script.count())
	}
	for _, a := range e.client.Actions() {
		if a.GetResource().Resource == "volumeattachments" {
			if name := a.(k8stesting.GetAction).GetName(); name != attachmentName(testHandle, testDriver, testNode) {
				t.Errorf("read VolumeAttachment %s", name)
			}
		}
	}
	stage := request[*csipb.NodeStageVolumeRequest](t, e.drv, "NodeStageVolume")
	publish := request[*csipb.NodePublishVolumeRequest](t, e.drv, "NodePublishVolume")
	if diff := cmp.Diff(metadata, stage.GetPublishContext(), protocmp.Transform()); diff != "" {
		t.Errorf("stage's publish context (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(metadata, publish.GetPublishContext(), protocmp.Transform()); diff != "" {
		t.Errorf("publish's publish context (-want +got):\n%s", diff)
	}
}

// TestSetUpAttachFailures: an attach error or a deletion stops the wait
// with its message; the end of the context stops it with upstream's "not
// attached"; nothing is staged or published.
func TestSetUpAttachFailures(t *testing.T) {
	failed := attachment(testHandle, false, nil)
	failed.Status.AttachError = &storagev1.VolumeError{Message: "rpc error: code = Internal desc = disk is busy"}
	deleting := attachment(testHandle, true, nil)
	deleting.DeletionTimestamp = ptr.To(metav1.Unix(1, 0))
	for _, tc := range []struct {
		name    string
		answers []*storagev1.VolumeAttachment
		// cancelAt cancels the context at that read.
		cancelAt int
		want     string
	}{
		{name: "attach error after waiting", answers: []*storagev1.VolumeAttachment{attachment(testHandle, false, nil), failed},
			want: "disk is busy"},
		{name: "being deleted", answers: []*storagev1.VolumeAttachment{deleting}, want: "volume attachment is being deleted"},
		{name: "never attached", answers: []*storagev1.VolumeAttachment{nil}, cancelAt: 4,
			want: "volume vol-1 is not attached for volume attachment " + attachmentName(testHandle, testDriver, testNode)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newMounterEnv(t, stageCaps(), csiDriver(nil))
			ctx, cancel := context.WithCancel(testContext(t))
			defer cancel()
			script := &attachScript{answers: tc.answers, onRead: func(n int) {
				if n == tc.cancelAt {
					cancel()
				}
			}}
			e.client.PrependReactor("get", "volumeattachments", script.react)
			_, err := e.m.SetUp(ctx, testPod(testPodUID), testPV())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("SetUp error %v, want one saying %q", err, tc.want)
			}
			if tc.cancelAt != 0 && !errors.Is(err, context.Canceled) {
				t.Errorf("SetUp error %v is not the context's", err)
			}
			if calls := e.drv.Methods(); len(calls) != 0 {
				t.Errorf("driver called: %v", calls)
			}
		})
	}
}

// TestSetUpWithoutAttach: a driver whose CSIDriver says attachRequired
// false is published at once, with no publish context.
func TestSetUpWithoutAttach(t *testing.T) {
	e := newMounterEnv(t, nil, csiDriver(func(s *storagev1.CSIDriverSpec) { s.AttachRequired = ptr.To(false) }),
		secret("kube-system", "publish", nil))
	if _, err := e.m.SetUp(testContext(t), testPod(testPodUID), testPV()); err != nil {
		t.Fatal(err)
	}
	for _, a := range e.client.Actions() {
		if a.GetResource().Resource == "volumeattachments" {
			t.Errorf("VolumeAttachment read: %v", a)
		}
	}
	publish := request[*csipb.NodePublishVolumeRequest](t, e.drv, "NodePublishVolume")
	if publish.GetPublishContext() != nil || publish.GetStagingTargetPath() != "" {
		t.Errorf("publish context %v, staging path %q: want none (no attach, no STAGE_UNSTAGE_VOLUME)", publish.GetPublishContext(), publish.GetStagingTargetPath())
	}
	if calls := e.drv.CallsTo("NodeStageVolume"); len(calls) != 0 {
		t.Errorf("staged by a driver without STAGE_UNSTAGE_VOLUME: %v", calls)
	}
}

// TestAttachRequiredAndUniqueName: upstream's CanAttach, unique volume
// name and RequiresRemount.
func TestAttachRequiredAndUniqueName(t *testing.T) {
	for _, tc := range []struct {
		name    string
		objects []runtime.Object
		v       Volume
		want    bool
	}{
		{"no CSIDriver", nil, testPV(), true},
		{"attachRequired true", []runtime.Object{csiDriver(nil)}, testPV(), true},
		{"attachRequired unset", []runtime.Object{csiDriver(func(s *storagev1.CSIDriverSpec) { s.AttachRequired = nil })}, testPV(), true},
		{"attachRequired false", []runtime.Object{csiDriver(func(s *storagev1.CSIDriverSpec) { s.AttachRequired = ptr.To(false) })}, testPV(), false},
		{"inline", []runtime.Object{csiDriver(nil)}, Volume{SpecName: "x", Driver: testDriver, Inline: true}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newMounterEnv(t, nil, tc.objects...)
			got, err := e.m.AttachRequired(testContext(t), tc.v)
			if err != nil || got != tc.want {
				t.Errorf("AttachRequired = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
	e := newMounterEnv(t, nil, csiDriver(func(s *storagev1.CSIDriverSpec) { s.RequiresRepublish = ptr.To(true) }))
	if got, err := e.m.RequiresRepublish(testContext(t), testPV()); err != nil || !got {
		t.Errorf("RequiresRepublish = %v, %v; want true", got, err)
	}
	if got, want := e.m.UniqueName(testPV()), "kubernetes.io/csi/csi.example.com^vol-1"; got != want {
		t.Errorf("UniqueName = %q, want %q", got, want)
	}
	if got := e.m.UniqueName(Volume{SpecName: "x", Driver: testDriver, Inline: true}); got != "" {
		t.Errorf("UniqueName of an inline volume = %q, want none", got)
	}
}
