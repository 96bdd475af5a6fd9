package mirrorpod

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// TestKeeper: the keeper sends what Plan decides for the mirror pod the
// API source has: a create when there is none, a delete and a create when
// it is outdated, nothing when it is current or the static pod is being
// stopped; Delete removes only the static pod's own mirror.
func TestKeeper(t *testing.T) {
	static := staticPod()
	current := static.DeepCopy()
	current.Annotations[podutil.ConfigMirrorAnnotation] = static.Annotations[podutil.ConfigHashAnnotation]
	outdated := static.DeepCopy()
	outdated.Annotations[podutil.ConfigMirrorAnnotation] = "old-hash"
	tests := []struct {
		name        string
		mirror      *corev1.Pod
		terminating bool
		delete      bool
		want        []string
	}{
		{name: "none yet", want: []string{"create"}},
		{name: "current", mirror: current},
		{name: "outdated", mirror: outdated, want: []string{"delete", "create"}},
		{name: "terminating", terminating: true},
		{name: "delete own", mirror: current, delete: true, want: []string{"delete"}},
		{name: "delete none", delete: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var objs []*corev1.Pod
			if tt.mirror != nil {
				objs = append(objs, tt.mirror)
			}
			cs := fake.NewClientset()
			for _, o := range objs {
				if err := cs.Tracker().Add(o); err != nil {
					t.Fatal(err)
				}
			}
			k := &Keeper{
				Client: New(cs, "node1", nodeUID("node-uid")),
				Lookup: func(fullName string) (*corev1.Pod, bool) {
					if tt.mirror != nil && fullName == podutil.FullName(tt.mirror) {
						return tt.mirror, true
					}
					return nil, false
				},
				Terminating: func(types.UID) bool { return tt.terminating },
			}
			var err error
			if tt.delete {
				err = k.Delete(context.Background(), static)
			} else {
				err = k.Sync(context.Background(), static)
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, a := range cs.Actions() {
				if a.GetVerb() == "create" || a.GetVerb() == "delete" {
					got = append(got, a.GetVerb())
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}
