package objectcache

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// fakeAPI is client-go's fake clientset with list and watch reactors that
// honour the field selector metadata.name=<name> as the API server does
// (the fake tracker ignores field selectors) and record every watch.
type fakeAPI struct {
	client *fake.Clientset

	mu      sync.Mutex // guards watches and gets
	watches []*recordedWatch
	gets    []metav1.GetOptions
}

// recordedWatch is one watch request; stopped is closed when the
// reflector stops it.
type recordedWatch struct {
	resource, namespace, selector string
	stopped                       chan struct{}
	once                          sync.Once
	watch.Interface
}

func (w *recordedWatch) Stop() {
	w.once.Do(func() { close(w.stopped) })
	w.Interface.Stop()
}

func newFakeAPI(t *testing.T, objects ...runtime.Object) *fakeAPI {
	t.Helper()
	f := &fakeAPI{client: fake.NewClientset(objects...)}
	for _, res := range []string{"configmaps", "secrets"} {
		f.client.PrependReactor("list", res, f.list)
		f.client.PrependWatchReactor(res, f.watch)
		f.client.PrependReactor("get", res, func(a k8stesting.Action) (bool, runtime.Object, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.gets = append(f.gets, a.(k8stesting.GetActionImpl).GetOptions)
			return false, nil, nil
		})
	}
	return f
}

// nameOf returns the name a list or watch selects, or "" for all.
func nameOf(t fields.Selector) string {
	name, _ := t.RequiresExactMatch("metadata.name")
	return name
}

func (f *fakeAPI) list(a k8stesting.Action) (bool, runtime.Object, error) {
	la := a.(k8stesting.ListActionImpl)
	gvk := schema.GroupVersionKind{Version: "v1", Kind: map[string]string{"configmaps": "ConfigMap", "secrets": "Secret"}[la.GetResource().Resource]}
	obj, err := f.client.Tracker().List(la.GetResource(), gvk, la.GetNamespace())
	if err != nil {
		return true, nil, err
	}
	name := nameOf(la.GetListRestrictions().Fields)
	items, err := meta.ExtractList(obj)
	if err != nil {
		return true, nil, err
	}
	var kept []runtime.Object
	for _, it := range items {
		if m, _ := meta.Accessor(it); name == "" || m.GetName() == name {
			kept = append(kept, it)
		}
	}
	return true, obj, meta.SetList(obj, kept)
}

func (f *fakeAPI) watch(a k8stesting.Action) (bool, watch.Interface, error) {
	wa := a.(k8stesting.WatchActionImpl)
	w, err := f.client.Tracker().Watch(wa.GetResource(), wa.GetNamespace())
	if err != nil {
		return true, nil, err
	}
	sel := wa.GetWatchRestrictions().Fields
	name := nameOf(sel)
	filtered := watch.Filter(w, func(e watch.Event) (watch.Event, bool) {
		m, err := meta.Accessor(e.Object)
		return e, err == nil && (name == "" || m.GetName() == name)
	})
	rw := &recordedWatch{resource: wa.GetResource().Resource, namespace: wa.GetNamespace(), selector: sel.String(),
		stopped: make(chan struct{}), Interface: filtered}
	f.mu.Lock()
	f.watches = append(f.watches, rw)
	f.mu.Unlock()
	return true, rw, nil
}

// waitOpened waits for the n-th watch of one object to be opened and
// returns it.
func (f *fakeAPI) waitOpened(t *testing.T, resource, name string, n int) *recordedWatch {
	t.Helper()
	eventually(t, "watch of "+resource+" "+name+" opened", func() bool { return len(f.watchesOf(resource, "ns", name)) >= n })
	return f.watchesOf(resource, "ns", name)[n-1]
}

func isStopped(w *recordedWatch) bool {
	select {
	case <-w.stopped:
		return true
	default:
		return false
	}
}

// watchesOf returns the watches opened for one object.
func (f *fakeAPI) watchesOf(resource, ns, name string) []*recordedWatch {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*recordedWatch
	for _, w := range f.watches {
		if w.resource == resource && w.namespace == ns && w.selector == "metadata.name="+name {
			out = append(out, w)
		}
	}
	return out
}

func (f *fakeAPI) getCalls() []metav1.GetOptions {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]metav1.GetOptions(nil), f.gets...)
}

// eventually polls cond until it holds or ten seconds pass: informers
// deliver asynchronously.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 10*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func configMap(name, value string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Data: map[string]string{"k": value}}
}

func secret(name, value string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Data: map[string][]byte{"k": []byte(value)}}
}

// podUsing references configMaps through env and secrets through volumes.
func podUsing(uid string, configMaps []string, secrets []string) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "pod-" + uid, UID: types.UID(uid)},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}}
	for _, n := range configMaps {
		pod.Spec.Containers[0].Env = append(pod.Spec.Containers[0].Env, corev1.EnvVar{Name: "V", ValueFrom: cmKeyRef(n)})
	}
	for _, n := range secrets {
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: n, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: n}}})
	}
	return pod
}
