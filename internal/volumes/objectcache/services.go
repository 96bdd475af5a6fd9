package objectcache

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// services is the informer of every Service in the cluster, which the
// environment's service links (enableServiceLinks) and the
// KUBERNETES_SERVICE_* variables are made from, as upstream's kubelet
// keeps one (serviceLister). Unlike configMaps and secrets it lists every
// object, so it is no store of referenced objects: one informer, run by
// Objects.Run. Set once by New; the informer's lister is safe for
// concurrent use.
type services struct {
	factory informers.SharedInformerFactory
	lister  corelisters.ServiceLister
	synced  cache.InformerSynced
}

func newServices(client kubernetes.Interface) *services {
	factory := informers.NewSharedInformerFactory(client, 0)
	informer := factory.Core().V1().Services()
	return &services{factory: factory, lister: informer.Lister(), synced: informer.Informer().HasSynced}
}

// run runs the informer until ctx ends.
func (s *services) run(ctx context.Context) {
	s.factory.Start(ctx.Done())
	<-ctx.Done()
	s.factory.Shutdown()
}

// Services lists the cluster's services and whether the informer has
// synced; in standalone mode there are none, and that counts as synced.
func (o *Objects) Services() ([]*corev1.Service, bool) {
	if o.services == nil {
		return nil, true
	}
	if !o.services.synced() {
		return nil, false
	}
	list, err := o.services.lister.List(labels.Everything())
	return list, err == nil
}

// NodeAllocatable is the registered Node's allocatable (Config.Node), for
// resourceFieldRef defaults; nil before registration and in standalone
// mode without a Node.
func (o *Objects) NodeAllocatable() corev1.ResourceList {
	if o.node == nil {
		return nil
	}
	if node := o.node(); node != nil {
		return node.Status.Allocatable
	}
	return nil
}
