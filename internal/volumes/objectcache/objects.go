package objectcache

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/clock"
)

// Config configures Objects.
type Config struct {
	// Client reads the objects; nil in standalone mode, where every read
	// fails (pods of static sources cannot reference API objects).
	Client kubernetes.Interface
	// Strategy is configMapAndSecretChangeDetectionStrategy: Watch (also
	// when empty), Cache or Get.
	Strategy kubeletconfigv1beta1.ResourceChangeDetectionStrategy
	// Clock bounds the wait for a watch's first list and ages cached
	// objects (required with a Client).
	Clock clock.Clock
	// Node returns the registered Node (nil until registration), whose
	// node.alpha.kubernetes.io/ttl annotation sets the Cache strategy's
	// TTL (nil means DefaultTTL) and whose allocatable NodeAllocatable
	// returns.
	Node func() *corev1.Node
}

// Objects is the node's one source of configMaps and secrets: volume
// contents, container environments and image pull secrets all read them
// here. It also serves the cluster's services and the node's allocatable,
// the rest of what a container's environment is made of
// (kuberuntime.EnvSource). Pods are registered while they may run (RegisterPod) and
// unregistered once they terminated (UnregisterPod); with the Watch and
// Cache strategies only the objects a registered pod references can be
// read.
//
// Objects returned are shared with the cache: callers must not modify
// them. Safe for concurrent use; Run must run (in cluster mode with the
// Watch strategy) for watches to start.
type Objects struct {
	configMaps store // nil: standalone
	secrets    store
	watches    []*watchStore // the Watch strategy's stores, which Run runs
	services   *services     // nil: standalone
	node       func() *corev1.Node

	mu   sync.Mutex // guards pods
	pods map[types.UID]podRefs
}

// podRefs are the objects one registered pod references.
type podRefs struct {
	namespace  string
	configMaps []string
	secrets    []string
}

// New returns Objects for cfg; it starts nothing.
func New(cfg Config) (*Objects, error) {
	o := &Objects{pods: map[types.UID]podRefs{}, node: cfg.Node}
	if cfg.Client == nil {
		return o, nil
	}
	if cfg.Clock == nil {
		return nil, errors.New("new object cache: Clock is required")
	}
	o.services = newServices(cfg.Client)
	switch cfg.Strategy {
	case kubeletconfigv1beta1.WatchChangeDetectionStrategy, "":
		cms, secs := newWatchStore(configMapKind, cfg.Client, cfg.Clock), newWatchStore(secretKind, cfg.Client, cfg.Clock)
		o.configMaps, o.secrets, o.watches = cms, secs, []*watchStore{cms, secs}
	case kubeletconfigv1beta1.TTLCacheChangeDetectionStrategy:
		ttl := func() time.Duration { return DefaultTTL }
		if cfg.Node != nil {
			ttl = func() time.Duration { return TTL(cfg.Node()) }
		}
		o.configMaps = newTTLStore(configMapKind, cfg.Client, cfg.Clock, ttl)
		o.secrets = newTTLStore(secretKind, cfg.Client, cfg.Clock, ttl)
	case kubeletconfigv1beta1.GetChangeDetectionStrategy:
		o.configMaps = &getStore{kind: configMapKind, client: cfg.Client}
		o.secrets = &getStore{kind: secretKind, client: cfg.Client}
	default:
		return nil, fmt.Errorf("unknown configMap and secret change detection strategy %q", cfg.Strategy)
	}
	return o, nil
}

// Run runs the services informer and the watches of the Watch strategy
// until ctx ends; in standalone mode it only waits for ctx.
func (o *Objects) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	if o.services != nil {
		wg.Go(func() { o.services.run(ctx) })
	}
	for _, w := range o.watches {
		wg.Go(func() { w.run(ctx) })
	}
	<-ctx.Done()
	wg.Wait()
	return nil
}

// RegisterPod records the configMaps and secrets the pod references (a
// watch starts for each new one); registering a pod again replaces its
// references with those of the new spec. It never blocks on the network.
func (o *Objects) RegisterPod(pod *corev1.Pod) {
	if o.configMaps == nil {
		return
	}
	next := podRefs{namespace: pod.Namespace, configMaps: ConfigMapNames(pod), secrets: SecretNames(pod)}
	o.mu.Lock()
	defer o.mu.Unlock()
	prev := o.pods[pod.UID]
	o.pods[pod.UID] = next
	o.update(prev, next)
}

// UnregisterPod drops the references of the pod (by UID); the watch of an
// object no other registered pod references stops. Idempotent.
func (o *Objects) UnregisterPod(pod *corev1.Pod) { o.unregister(pod.UID) }

// Forget unregisters a pod that is gone (podgone.Owner); podsync has
// unregistered it as it terminated.
func (o *Objects) Forget(_ context.Context, uid types.UID) { o.unregister(uid) }

func (o *Objects) unregister(uid types.UID) {
	if o.configMaps == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	prev, ok := o.pods[uid]
	if !ok {
		return
	}
	delete(o.pods, uid)
	o.update(prev, podRefs{namespace: prev.namespace})
}

// update moves the references of one pod from prev to next; o.mu held.
func (o *Objects) update(prev, next podRefs) {
	move(o.configMaps, prev.namespace, prev.configMaps, next.namespace, next.configMaps)
	move(o.secrets, prev.namespace, prev.secrets, next.namespace, next.secrets)
}

// move adds to s the references in next and not in prev, and removes those
// in prev and not in next.
func move(s store, prevNS string, prev []string, nextNS string, next []string) {
	added, removed := next, prev
	if prevNS == nextNS { // always, but for a pod's first registration
		added, removed = diff(prev, next)
	}
	for _, n := range added {
		s.add(key{nextNS, n})
	}
	for _, n := range removed {
		s.remove(key{prevNS, n})
	}
}

// ConfigMap returns the configMap, or an error for which
// apierrors.IsNotFound is true when it does not exist.
func (o *Objects) ConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error) {
	obj, err := o.get(ctx, o.configMaps, configMapKind, key{namespace, name})
	if err != nil {
		return nil, err
	}
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok {
		return nil, fmt.Errorf("get configmap %q: unexpected type %T", key{namespace, name}, obj)
	}
	return cm, nil
}

// Secret returns the secret, or an error for which apierrors.IsNotFound is
// true when it does not exist.
func (o *Objects) Secret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	obj, err := o.get(ctx, o.secrets, secretKind, key{namespace, name})
	if err != nil {
		return nil, err
	}
	s, ok := obj.(*corev1.Secret)
	if !ok {
		return nil, fmt.Errorf("get secret %q: unexpected type %T", key{namespace, name}, obj)
	}
	return s, nil
}

func (o *Objects) get(ctx context.Context, s store, kd kind, k key) (runtime.Object, error) {
	if s == nil {
		return nil, fmt.Errorf("%s %q needs an API server (berth runs standalone)", kd.name, k.name)
	}
	return s.get(ctx, k)
}
