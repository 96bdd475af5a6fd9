package objectcache

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// kind is what the stores need to know about one kind of object: how to
// read it from the API and whether an object of it can still change.
type kind struct {
	// name is the kind in messages ("configmap").
	name string
	// resource names the kind in NotFound errors.
	resource schema.GroupResource
	// object is an empty object of the kind, for reflectors.
	object runtime.Object
	get    func(ctx context.Context, c kubernetes.Interface, ns, name string, opts metav1.GetOptions) (runtime.Object, error)
	list   func(ctx context.Context, c kubernetes.Interface, ns string, opts metav1.ListOptions) (runtime.Object, error)
	watch  func(ctx context.Context, c kubernetes.Interface, ns string, opts metav1.ListOptions) (watch.Interface, error)
	// immutable reports whether the object is marked immutable: its
	// content can no longer change, so it needs no watch.
	immutable func(runtime.Object) bool
	// names lists the objects of the kind a pod references.
	names func(*corev1.Pod) []string
}

var configMapKind = kind{
	name:     "configmap",
	resource: corev1.Resource("configmaps"),
	object:   &corev1.ConfigMap{},
	get: func(ctx context.Context, c kubernetes.Interface, ns, name string, opts metav1.GetOptions) (runtime.Object, error) {
		return c.CoreV1().ConfigMaps(ns).Get(ctx, name, opts)
	},
	list: func(ctx context.Context, c kubernetes.Interface, ns string, opts metav1.ListOptions) (runtime.Object, error) {
		return c.CoreV1().ConfigMaps(ns).List(ctx, opts)
	},
	watch: func(ctx context.Context, c kubernetes.Interface, ns string, opts metav1.ListOptions) (watch.Interface, error) {
		return c.CoreV1().ConfigMaps(ns).Watch(ctx, opts)
	},
	immutable: func(o runtime.Object) bool {
		cm, ok := o.(*corev1.ConfigMap)
		return ok && cm.Immutable != nil && *cm.Immutable
	},
	names: ConfigMapNames,
}

var secretKind = kind{
	name:     "secret",
	resource: corev1.Resource("secrets"),
	object:   &corev1.Secret{},
	get: func(ctx context.Context, c kubernetes.Interface, ns, name string, opts metav1.GetOptions) (runtime.Object, error) {
		return c.CoreV1().Secrets(ns).Get(ctx, name, opts)
	},
	list: func(ctx context.Context, c kubernetes.Interface, ns string, opts metav1.ListOptions) (runtime.Object, error) {
		return c.CoreV1().Secrets(ns).List(ctx, opts)
	},
	watch: func(ctx context.Context, c kubernetes.Interface, ns string, opts metav1.ListOptions) (watch.Interface, error) {
		return c.CoreV1().Secrets(ns).Watch(ctx, opts)
	},
	immutable: func(o runtime.Object) bool {
		s, ok := o.(*corev1.Secret)
		return ok && s.Immutable != nil && *s.Immutable
	},
	names: SecretNames,
}

// key names one object.
type key struct{ namespace, name string }

func (k key) String() string { return k.namespace + "/" + k.name }

// store is one strategy's way to serve the objects of one kind. add and
// remove count references (one per pod and object) and never block on the
// network; get returns the object or an error that is NotFound when it
// does not exist.
type store interface {
	add(k key)
	remove(k key)
	get(ctx context.Context, k key) (runtime.Object, error)
}

// getStore reads every object from the API server (strategy Get); it needs
// no references.
type getStore struct {
	kind   kind
	client kubernetes.Interface
}

func (s *getStore) add(key)    {}
func (s *getStore) remove(key) {}

func (s *getStore) get(ctx context.Context, k key) (runtime.Object, error) {
	return fetch(ctx, s.kind, s.client, k, metav1.GetOptions{})
}

// fetch GETs one object. A NotFound error is returned as is (callers test
// it); others say which object.
func fetch(ctx context.Context, kd kind, c kubernetes.Interface, k key, opts metav1.GetOptions) (runtime.Object, error) {
	obj, err := kd.get(ctx, c, k.namespace, k.name, opts)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil, err
		}
		return nil, fmt.Errorf("get %s %q: %w", kd.name, k, err)
	}
	return obj, nil
}

// errNotRegistered is the error for an object no registered pod
// references (strategies Watch and Cache), as upstream's "not registered".
func errNotRegistered(kd kind, k key) error {
	return fmt.Errorf("get %s %q: not referenced by any registered pod", kd.name, k)
}
