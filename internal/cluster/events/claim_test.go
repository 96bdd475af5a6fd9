package events

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestClaimEventReachesTheAPI: an event about a claim names the claim as
// its involvedObject, in the claim's namespace.
func TestClaimEventReachesTheAPI(t *testing.T) {
	var logs logLines
	r, created := newSending(t, &logs)
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "data", UID: "pvc-1", ResourceVersion: "3"}}
	r.ClaimEventf(pvc, corev1.EventTypeNormal, "FileSystemResizeSuccessful", "expanded %s", "data")
	ev := receive(t, created)
	want := corev1.Event{
		InvolvedObject: corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: "shop", Name: "data", UID: "pvc-1", ResourceVersion: "3"},
		Reason:         "FileSystemResizeSuccessful", Message: "expanded data", Count: 1, Type: corev1.EventTypeNormal,
		Source: corev1.EventSource{Component: "kubelet", Host: nodeName}, ReportingController: "kubelet", ReportingInstance: nodeName,
	}
	if diff := cmp.Diff(want, *ev, ignoreGenerated); diff != "" {
		t.Errorf("event (-want +got):\n%s", diff)
	}
	if ev.Namespace != "shop" {
		t.Errorf("event in namespace %q, want shop", ev.Namespace)
	}
}
