package kuberuntime

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/berthk8s/berth/internal/pod/containerconfig"
	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// eventInvalidEnvironmentVariableNames is upstream's reason for the event
// listing the envFrom keys skipped as invalid variable names.
const eventInvalidEnvironmentVariableNames = "InvalidEnvironmentVariableNames"

// EnvSource is where container environments look up what is not in the
// pod: configMaps and secrets (env valueFrom and envFrom), the services
// whose variables every container gets, and the node's allocatable
// resources (the default of a limit a resourceFieldRef reads). Declared
// here, by its consumer; implementations must be safe for concurrent use.
//
// A nil EnvSource (berth without an API server) has no services and no
// allocatable, and fails every configMap and secret reference.
type EnvSource interface {
	// ConfigMap and Secret return the object, or an error for which
	// apierrors.IsNotFound is true when it does not exist (an optional
	// reference is then skipped). The error's message is what the
	// container's CreateContainerConfigError says.
	ConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error)
	Secret(ctx context.Context, namespace, name string) (*corev1.Secret, error)
	// Services returns the services of every namespace, and whether they
	// have been read from the API at least once.
	Services() (services []*corev1.Service, synced bool)
	// NodeAllocatable returns the node's allocatable resources, nil when
	// not known yet.
	NodeAllocatable() corev1.ResourceList
}

// envInput is what a container's environment is resolved from here: the
// pod and container, the IPs, and the source to fetch the rest from.
type envInput struct {
	Pod       *corev1.Pod
	Container *corev1.Container
	// PodIPs and HostIPs are primary first. A host-network pod's IPs are
	// the host's.
	PodIPs, HostIPs []string
	// Source looks up configMaps, secrets, services and the node's
	// allocatable; nil without an API server.
	Source EnvSource
}

// containerEnv and skippedKeys are containerconfig's.
type (
	containerEnv = containerconfig.ContainerEnv
	skippedKeys  = containerconfig.SkippedKeys
)

// resolveEnv fetches what the container's environment reads (each
// configMap and secret once, the services, the node's allocatable) and
// has containerconfig.Env build it.
func resolveEnv(ctx context.Context, in envInput) (containerEnv, error) {
	b := containerconfig.EnvInput{Pod: in.Pod, Container: in.Container, PodIPs: in.PodIPs, HostIPs: in.HostIPs,
		Standalone: in.Source == nil}
	if in.Source != nil {
		b.Services, b.ServicesSynced = in.Source.Services()
		b.Allocatable = in.Source.NodeAllocatable()
		b.ConfigMaps, b.Secrets, b.FetchErrs = fetchEnvObjects(ctx, in.Source, in.Pod.Namespace, in.Container)
	}
	return containerconfig.Env(b)
}

// fetchEnvObjects reads the configMaps and secrets the container's
// environment names. A missing object is a nil entry; other failures are
// kept by "configmap/<name>" or "secret/<name>".
func fetchEnvObjects(ctx context.Context, src EnvSource, ns string, c *corev1.Container) (map[string]*corev1.ConfigMap, map[string]*corev1.Secret, map[string]error) {
	cmNames, secretNames := podutil.EnvReferences(c.Env, c.EnvFrom)
	cms := make(map[string]*corev1.ConfigMap, len(cmNames))
	secrets := make(map[string]*corev1.Secret, len(secretNames))
	errs := map[string]error{}
	for _, n := range cmNames {
		cm, err := src.ConfigMap(ctx, ns, n)
		switch {
		case apierrors.IsNotFound(err):
			cms[n] = nil
		case err != nil:
			errs["configmap/"+n] = err
		default:
			cms[n] = cm
		}
	}
	for _, n := range secretNames {
		s, err := src.Secret(ctx, ns, n)
		switch {
		case apierrors.IsNotFound(err):
			secrets[n] = nil
		case err != nil:
			errs["secret/"+n] = err
		default:
			secrets[n] = s
		}
	}
	return cms, secrets, errs
}
