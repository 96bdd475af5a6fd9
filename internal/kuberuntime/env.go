package kuberuntime

import (
	"context"
	"fmt"
	"sort"

	"github.com/berthk8s/berth/internal/downward"
	"github.com/berthk8s/berth/internal/expansion"
	"github.com/berthk8s/berth/internal/podutil"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// eventInvalidEnvironmentVariableNames is upstream's reason for the event
// listing the envFrom keys skipped as invalid variable names.
const eventInvalidEnvironmentVariableNames = "InvalidEnvironmentVariableNames"

// envInput is everything a container's environment is resolved from.
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

// containerEnv is a container's resolved environment.
type containerEnv struct {
	// Envs is the CRI list: service variables (sorted), then each envFrom
	// source's keys (sorted), then env in declaration order; a name
	// defined again keeps its first place and takes the later value.
	Envs []*runtimeapi.KeyValue
	// Vars is the same as a map, for $(VAR) in command, args and
	// subPathExpr.
	Vars map[string]string
	// Skipped lists, per envFrom source, the keys that are not valid
	// variable names (event InvalidEnvironmentVariableNames).
	Skipped []skippedKeys
}

// skippedKeys are the invalid keys of one envFrom source.
type skippedKeys struct {
	// Kind is "configMap" or "secret"; Name is namespace/name.
	Kind, Name string
	Keys       []string
}

// envBuilder accumulates variables in first-definition order.
type envBuilder struct {
	env   containerEnv
	index map[string]int
}

func (b *envBuilder) set(name, value string) {
	b.env.Vars[name] = value
	if i, ok := b.index[name]; ok {
		b.env.Envs[i].Value = []byte(value)
		return
	}
	b.index[name] = len(b.env.Envs)
	b.env.Envs = append(b.env.Envs, &runtimeapi.KeyValue{Key: name, Value: []byte(value)})
}

// resolveEnv resolves the container's environment as upstream
// makeEnvironmentVariables does: service variables first, then envFrom in
// order, then env in order (a later definition wins). An env value has its
// $(VAR) references expanded over every variable defined so far and the
// service variables. A missing optional configMap, secret or key leaves
// the variable unset; a missing required one is an error, whose message
// the container's CreateContainerConfigError carries.
//
// It performs no effect besides the EnvSource look-ups; each configMap and
// secret is read once per call.
func resolveEnv(ctx context.Context, in envInput) (containerEnv, error) {
	pod, c := in.Pod, in.Container
	b := &envBuilder{env: containerEnv{Vars: map[string]string{}}, index: map[string]int{}}
	services, err := podServiceEnv(in)
	if err != nil {
		return containerEnv{}, err
	}
	for _, k := range sortedKeys(services) {
		b.set(k, services[k])
	}
	objects := &envObjects{source: in.Source, namespace: pod.Namespace,
		configMaps: map[string]*corev1.ConfigMap{}, secrets: map[string]*corev1.Secret{}}
	for _, from := range c.EnvFrom {
		if err := addEnvFrom(ctx, b, objects, from); err != nil {
			return containerEnv{}, err
		}
	}
	for _, e := range c.Env {
		value, ok, err := envValue(ctx, in, objects, e, b.env.Vars)
		if err != nil {
			return containerEnv{}, err
		}
		if ok {
			b.set(e.Name, value)
		}
	}
	return b.env, nil
}

// podServiceEnv returns the service variables of the pod. Until services
// have been read once, only static pods may start (upstream refuses API
// pods then, to not start them without their service variables).
func podServiceEnv(in envInput) (map[string]string, error) {
	if in.Source == nil {
		return nil, nil
	}
	services, synced := in.Source.Services()
	if !synced {
		if in.Pod.Annotations[podutil.ConfigSourceAnnotation] == podutil.APISource {
			return nil, fmt.Errorf("services have not yet been read at least once, cannot construct envvars")
		}
		return nil, nil
	}
	links := in.Pod.Spec.EnableServiceLinks == nil || *in.Pod.Spec.EnableServiceLinks
	return serviceEnv(services, in.Pod.Namespace, links), nil
}

// addEnvFrom adds the keys of one envFrom source, with its prefix. Keys
// that are not valid variable names are skipped and listed.
func addEnvFrom(ctx context.Context, b *envBuilder, objects *envObjects, from corev1.EnvFromSource) error {
	var (
		data   map[string]string
		kind   string
		name   string
		exists bool
		err    error
	)
	switch {
	case from.ConfigMapRef != nil:
		kind, name = "configMap", from.ConfigMapRef.Name
		data, exists, err = objects.configMapData(ctx, name, isOptional(from.ConfigMapRef.Optional))
	case from.SecretRef != nil:
		kind, name = "secret", from.SecretRef.Name
		data, exists, err = objects.secretData(ctx, name, isOptional(from.SecretRef.Optional))
	default:
		return nil
	}
	if err != nil || !exists {
		return err
	}
	var invalid []string
	for _, k := range sortedKeys(data) {
		key := from.Prefix + k
		if len(validation.IsEnvVarName(key)) != 0 {
			invalid = append(invalid, key)
			continue
		}
		b.set(key, data[k])
	}
	if len(invalid) > 0 {
		b.env.Skipped = append(b.env.Skipped, skippedKeys{Kind: kind, Name: objects.namespace + "/" + name, Keys: invalid})
	}
	return nil
}

// envValue returns the value of one env entry and whether to set it: a
// literal value expanded over vars, or the value of its source.
func envValue(ctx context.Context, in envInput, objects *envObjects, e corev1.EnvVar, vars map[string]string) (string, bool, error) {
	from := e.ValueFrom
	switch {
	case e.Value != "":
		return expansion.Expand(e.Value, vars), true, nil
	case from == nil:
		return "", true, nil
	case from.FieldRef != nil:
		v, err := fieldRefValue(in.Pod, from.FieldRef, in.PodIPs, in.HostIPs)
		return v, err == nil, err
	case from.ResourceFieldRef != nil:
		var allocatable corev1.ResourceList
		if in.Source != nil {
			allocatable = in.Source.NodeAllocatable()
		}
		v, err := downward.Resource(in.Pod, in.Container, from.ResourceFieldRef, allocatable)
		return v, err == nil, err
	case from.ConfigMapKeyRef != nil:
		ref := from.ConfigMapKeyRef
		data, exists, err := objects.configMapData(ctx, ref.Name, isOptional(ref.Optional))
		if err != nil || !exists {
			return "", false, err
		}
		return keyValue(data, ref.Key, isOptional(ref.Optional), "ConfigMap", objects.namespace, ref.Name)
	case from.SecretKeyRef != nil:
		ref := from.SecretKeyRef
		data, exists, err := objects.secretData(ctx, ref.Name, isOptional(ref.Optional))
		if err != nil || !exists {
			return "", false, err
		}
		return keyValue(data, ref.Key, isOptional(ref.Optional), "Secret", objects.namespace, ref.Name)
	}
	return "", true, nil
}

// keyValue looks a key up in a configMap's or secret's data.
func keyValue(data map[string]string, key string, optional bool, kind, namespace, name string) (string, bool, error) {
	v, ok := data[key]
	if !ok && !optional {
		return "", false, fmt.Errorf("couldn't find key %v in %s %v/%v", key, kind, namespace, name)
	}
	return v, ok, nil
}

func isOptional(b *bool) bool { return b != nil && *b }

// envObjects reads the configMaps and secrets of one container's
// environment, each once.
type envObjects struct {
	source     EnvSource
	namespace  string
	configMaps map[string]*corev1.ConfigMap // nil value: not found
	secrets    map[string]*corev1.Secret    // nil value: not found
}

// configMapData returns the configMap's data (binaryData is not part of
// the environment) and whether it exists. Not found is an error unless
// optional, with upstream's message (configmap "name" not found).
func (o *envObjects) configMapData(ctx context.Context, name string, optional bool) (map[string]string, bool, error) {
	cm, seen := o.configMaps[name]
	if !seen {
		if o.source == nil {
			return nil, false, fmt.Errorf("couldn't get configMap %v/%v: configMap references need an API server", o.namespace, name)
		}
		var err error
		cm, err = o.source.ConfigMap(ctx, o.namespace, name)
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, false, err
		}
		if err != nil {
			cm = nil
		}
		o.configMaps[name] = cm
	}
	if cm == nil {
		if !optional {
			return nil, false, apierrors.NewNotFound(corev1.Resource("configmap"), name)
		}
		return nil, false, nil
	}
	return cm.Data, true, nil
}

// secretData is configMapData for secrets, values as strings.
func (o *envObjects) secretData(ctx context.Context, name string, optional bool) (map[string]string, bool, error) {
	s, seen := o.secrets[name]
	if !seen {
		if o.source == nil {
			return nil, false, fmt.Errorf("couldn't get secret %v/%v: secret references need an API server", o.namespace, name)
		}
		var err error
		s, err = o.source.Secret(ctx, o.namespace, name)
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, false, err
		}
		if err != nil {
			s = nil
		}
		o.secrets[name] = s
	}
	if s == nil {
		if !optional {
			return nil, false, apierrors.NewNotFound(corev1.Resource("secret"), name)
		}
		return nil, false, nil
	}
	data := make(map[string]string, len(s.Data))
	for k, v := range s.Data {
		data[k] = string(v)
	}
	return data, true, nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
