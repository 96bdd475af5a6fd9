package agent

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/berthk8s/berth/internal/kuberuntime"
)

var _ kuberuntime.EnvSource = (*envSource)(nil)

// envSource is the kuberuntime.EnvSource of the agent. In cluster mode it
// GETs configMaps and secrets through the main client (the node authorizer
// allows those that pods bound to the node reference) and lists services
// from an informer that Run runs; in standalone mode it has no services
// and refuses configMap and secret references. The node's allocatable
// comes from node(), in both modes.
//
// Safe for concurrent use: the informer's lister is, and the rest is set
// once by newEnvSource.
type envSource struct {
	client   kubernetes.Interface // nil: standalone
	factory  informers.SharedInformerFactory
	services corelisters.ServiceLister
	synced   cache.InformerSynced
	node     func() *corev1.Node
}

// newEnvSource builds the source; client may be nil (standalone). It
// starts nothing.
func newEnvSource(client kubernetes.Interface, node func() *corev1.Node) *envSource {
	s := &envSource{client: client, node: node}
	if client == nil {
		return s
	}
	s.factory = informers.NewSharedInformerFactory(client, 0)
	informer := s.factory.Core().V1().Services()
	s.services = informer.Lister()
	s.synced = informer.Informer().HasSynced
	return s
}

// Run runs the services informer until ctx ends.
func (s *envSource) Run(ctx context.Context) error {
	if s.factory != nil {
		s.factory.Start(ctx.Done())
		defer s.factory.Shutdown()
	}
	<-ctx.Done()
	return nil
}

func (s *envSource) ConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error) {
	if s.client == nil {
		return nil, fmt.Errorf("couldn't get configMap %s/%s: configMap references need an API server", namespace, name)
	}
	return s.client.CoreV1().ConfigMaps(namespace).Get(ctx, name, metav1.GetOptions{})
}

func (s *envSource) Secret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	if s.client == nil {
		return nil, fmt.Errorf("couldn't get secret %s/%s: secret references need an API server", namespace, name)
	}
	return s.client.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
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
