package agent

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/berthk8s/berth/internal/pod/kuberuntime"
	"github.com/berthk8s/berth/internal/volumes/objectcache"
)

var _ kuberuntime.EnvSource = (*envSource)(nil)

// envSource is the kuberuntime.EnvSource of the agent. ConfigMaps and
// secrets come from the node's one source of them (objectcache.Objects,
// embedded), which also refuses them in standalone mode. Services come
// from an informer of every service that Run runs in cluster mode;
// standalone has none. The node's allocatable comes from node(), in both
// modes. The services informer stays here, with its only reader, rather
// than in objectcache: it lists every service, where objectcache serves
// single objects that pods reference.
//
// Safe for concurrent use: Objects and the informer's lister are, and the
// rest is set once by newEnvSource.
type envSource struct {
	*objectcache.Objects
	factory  informers.SharedInformerFactory
	services corelisters.ServiceLister
	synced   cache.InformerSynced
	node     func() *corev1.Node
}

// newEnvSource builds the source; client may be nil (standalone). It
// starts nothing.
func newEnvSource(client kubernetes.Interface, objects *objectcache.Objects, node func() *corev1.Node) *envSource {
	s := &envSource{Objects: objects, node: node}
	if client == nil {
		return s
	}
	s.factory = informers.NewSharedInformerFactory(client, 0)
	informer := s.factory.Core().V1().Services()
	s.services = informer.Lister()
	s.synced = informer.Informer().HasSynced
	return s
}

// RunServices runs the services informer until ctx ends.
func (s *envSource) RunServices(ctx context.Context) error {
	if s.factory != nil {
		s.factory.Start(ctx.Done())
		defer s.factory.Shutdown()
	}
	<-ctx.Done()
	return nil
}

// Services lists the informer's services; standalone has none and counts
// as synced.
func (s *envSource) Services() ([]*corev1.Service, bool) {
	if s.services == nil {
		return nil, true
	}
	if !s.synced() {
		return nil, false
	}
	list, err := s.services.List(labels.Everything())
	return list, err == nil
}

func (s *envSource) NodeAllocatable() corev1.ResourceList {
	if node := s.node(); node != nil {
		return node.Status.Allocatable
	}
	return nil
}
