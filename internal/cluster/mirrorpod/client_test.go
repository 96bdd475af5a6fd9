package mirrorpod

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

func nodeUID(uid types.UID) func() types.UID { return func() types.UID { return uid } }

func TestCreate(t *testing.T) {
	cs := fake.NewClientset()
	c := New(cs, "node1", nodeUID("node-uid"))
	static := staticPod()
	if err := c.Create(context.Background(), static); err != nil {
		t.Fatalf("Create: %v", err)
	}
	actions := cs.Actions()
	if len(actions) != 1 {
		t.Fatalf("got %d requests, want 1: %v", len(actions), actions)
	}
	create, ok := actions[0].(clienttesting.CreateAction)
	if !ok || create.GetNamespace() != "default" || create.GetResource().Resource != "pods" || create.GetSubresource() != "" {
		t.Fatalf("request = %#v, want a pod create in default", actions[0])
	}
	want := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web-node1", Namespace: "default",
			Labels: map[string]string{"app": "web"},
			Annotations: map[string]string{
				podutil.ConfigHashAnnotation:   "hash1",
				podutil.ConfigSourceAnnotation: "file",
				podutil.ConfigSeenAnnotation:   "2026-11-22T19:00:00.000000000Z",
				podutil.ConfigMirrorAnnotation: "hash1",
			},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: "node1", UID: "node-uid", Controller: ptrTo(true)}},
		},
		Spec: static.Spec,
	}
	if diff := cmp.Diff(want, create.GetObject()); diff != "" {
		t.Errorf("mirror pod mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(staticPod(), static); diff != "" {
		t.Errorf("Create changed the static pod:\n%s", diff)
	}

	// A second Create finds the pod there: not an error.
	if err := c.Create(context.Background(), static); err != nil {
		t.Errorf("Create of an existing mirror pod: %v", err)
	}
}

func TestCreateFillsNodeName(t *testing.T) {
	static := staticPod()
	static.Spec.NodeName = ""
	if got := build(static, "node1", "u").Spec.NodeName; got != "node1" {
		t.Errorf("spec.nodeName = %q, want node1", got)
	}
}

func TestCreateBeforeRegistration(t *testing.T) {
	cs := fake.NewClientset()
	err := New(cs, "node1", nodeUID("")).Create(context.Background(), staticPod())
	if !errors.Is(err, ErrNodeNotRegistered) {
		t.Errorf("Create = %v, want ErrNodeNotRegistered", err)
	}
	if n := len(cs.Actions()); n != 0 {
		t.Errorf("sent %d requests before registration", n)
	}
}

func TestCreateError(t *testing.T) {
	cs := fake.NewClientset()
	cs.PrependReactor("create", "pods", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "web-node1", errors.New("node \"node1\" can not create pods that reference secrets"))
	})
	err := New(cs, "node1", nodeUID("u")).Create(context.Background(), staticPod())
	if !apierrors.IsForbidden(err) {
		t.Errorf("Create = %v, want the Forbidden error", err)
	}
}

func TestDelete(t *testing.T) {
	tests := []struct {
		name    string
		uid     types.UID
		reply   error
		want    metav1.DeleteOptions
		wantErr bool
	}{
		{"with uid", "mirror-uid", nil, metav1.DeleteOptions{GracePeriodSeconds: new(int64), Preconditions: &metav1.Preconditions{UID: ptrTo(types.UID("mirror-uid"))}}, false},
		{"without uid", "", nil, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}, false},
		{"gone", "mirror-uid", apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "web-node1"), metav1.DeleteOptions{GracePeriodSeconds: new(int64), Preconditions: &metav1.Preconditions{UID: ptrTo(types.UID("mirror-uid"))}}, false},
		{"replaced", "mirror-uid", apierrors.NewConflict(schema.GroupResource{Resource: "pods"}, "web-node1", errors.New("precondition failed: UID")), metav1.DeleteOptions{GracePeriodSeconds: new(int64), Preconditions: &metav1.Preconditions{UID: ptrTo(types.UID("mirror-uid"))}}, false},
		{"server error", "", apierrors.NewInternalError(errors.New("boom")), metav1.DeleteOptions{GracePeriodSeconds: new(int64)}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs := fake.NewClientset()
			var got *metav1.DeleteOptions
			cs.PrependReactor("delete", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
				d := a.(clienttesting.DeleteAction)
				if d.GetName() != "web-node1" || d.GetNamespace() != "default" {
					t.Errorf("delete of %s/%s", d.GetNamespace(), d.GetName())
				}
				opts := d.GetDeleteOptions()
				got = &opts
				return true, nil, tc.reply
			})
			err := New(cs, "node1", nodeUID("u")).Delete(context.Background(), "web-node1", "default", tc.uid)
			if (err != nil) != tc.wantErr {
				t.Errorf("Delete = %v, want error %v", err, tc.wantErr)
			}
			if got == nil {
				t.Fatal("no delete request")
			}
			if diff := cmp.Diff(tc.want, *got); diff != "" {
				t.Errorf("delete options mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestApply(t *testing.T) {
	old := mirrorPod()
	old.Annotations[podutil.ConfigMirrorAnnotation] = "old"
	tests := []struct {
		name   string
		action Action
		want   []string
	}{
		{"none", None, nil},
		{"create", Create, []string{"create pods default/"}},
		{"delete", Delete, []string{"delete pods default/web-node1"}},
		{"recreate", Recreate, []string{"delete pods default/web-node1", "create pods default/"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs := fake.NewClientset(old)
			if err := New(cs, "node1", nodeUID("u")).Apply(context.Background(), tc.action, staticPod(), old); err != nil {
				t.Fatalf("Apply: %v", err)
			}
			var got []string
			for _, a := range cs.Actions() {
				name := ""
				if d, ok := a.(clienttesting.DeleteAction); ok {
					name = d.GetName()
				}
				got = append(got, a.GetVerb()+" "+a.GetResource().Resource+" "+a.GetNamespace()+"/"+name)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
			if tc.action == Recreate {
				p, err := cs.CoreV1().Pods("default").Get(context.Background(), "web-node1", metav1.GetOptions{})
				if err != nil || p.Annotations[podutil.ConfigMirrorAnnotation] != "hash1" {
					t.Errorf("after Recreate: %v, %v; want the new mirror pod", p, err)
				}
			}
		})
	}
}
