package containerconfig

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/berthk8s/berth/internal/podkit/downward"
	"github.com/berthk8s/berth/internal/podkit/expansion"
	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// EnvInput is everything a container's environment is built from. The
// caller fetches what lives in the API (podutil.EnvReferences says which
// configMaps and secrets); Env only reads this.
type EnvInput struct {
	Pod       *corev1.Pod
	Container *corev1.Container
	// PodIPs and HostIPs are primary first. A host-network pod's IPs are
	// the host's.
	PodIPs, HostIPs []string
	// Standalone: berth runs without an API server; there are no services
	// and every configMap and secret reference fails.
	Standalone bool
	// Services are the services of every namespace; ServicesSynced says
	// whether they have been read from the API at least once.
	Services       []*corev1.Service
	ServicesSynced bool
	// Allocatable is the node's allocatable, the default of a limit a
	// resourceFieldRef reads; nil when not known yet.
	Allocatable corev1.ResourceList
	// ConfigMaps and Secrets are the objects podutil.EnvReferences named;
	// a nil value is one that does not exist. FetchErrs holds the other
	// fetch failures, by "configmap/<name>" or "secret/<name>": they are
	// the container's CreateContainerConfigError when it needs the object.
	ConfigMaps map[string]*corev1.ConfigMap
	Secrets    map[string]*corev1.Secret
	FetchErrs  map[string]error
}

// ContainerEnv is a container's resolved environment.
type ContainerEnv struct {
	// Envs is the CRI list: service variables (sorted), then each envFrom
	// source's keys (sorted), then env in declaration order; a name
	// defined again keeps its first place and takes the later value.
	Envs []*runtimeapi.KeyValue
	// Vars is the same as a map, for $(VAR) in command, args and
	// subPathExpr.
	Vars map[string]string
	// Skipped lists, per envFrom source, the keys that are not valid
	// variable names (event InvalidEnvironmentVariableNames).
	Skipped []SkippedKeys
}

// SkippedKeys are the invalid keys of one envFrom source.
type SkippedKeys struct {
	// Kind is "configMap" or "secret"; Name is namespace/name.
	Kind, Name string
	Keys       []string
}

// envBuilder accumulates variables in first-definition order.
type envBuilder struct {
	env   ContainerEnv
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

// Env builds the container's environment as upstream
// makeEnvironmentVariables does: service variables first, then envFrom in
// order, then env in order (a later definition wins). An env value has its
// $(VAR) references expanded over every variable defined so far and the
// service variables. A missing optional configMap, secret or key leaves
// the variable unset; a missing required one is an error, whose message
// the container's CreateContainerConfigError carries.
func Env(in EnvInput) (ContainerEnv, error) {
	c := in.Container
	b := &envBuilder{env: ContainerEnv{Vars: map[string]string{}}, index: map[string]int{}}
	services, err := podServiceEnv(in)
	if err != nil {
		return ContainerEnv{}, err
	}
	for _, k := range sortedKeys(services) {
		b.set(k, services[k])
	}
	for _, from := range c.EnvFrom {
		if err := addEnvFrom(b, &in, from); err != nil {
			return ContainerEnv{}, err
		}
	}
	for _, e := range c.Env {
		value, ok, err := envValue(&in, e, b.env.Vars)
		if err != nil {
			return ContainerEnv{}, err
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
func podServiceEnv(in EnvInput) (map[string]string, error) {
	if in.Standalone {
		return nil, nil
	}
	if !in.ServicesSynced {
		if in.Pod.Annotations[podutil.ConfigSourceAnnotation] == podutil.APISource {
			return nil, fmt.Errorf("services have not yet been read at least once, cannot construct envvars")
		}
		return nil, nil
	}
	links := in.Pod.Spec.EnableServiceLinks == nil || *in.Pod.Spec.EnableServiceLinks
	return serviceEnv(in.Services, in.Pod.Namespace, links), nil
}

// addEnvFrom adds the keys of one envFrom source, with its prefix. Keys
// that are not valid variable names are skipped and listed.
func addEnvFrom(b *envBuilder, in *EnvInput, from corev1.EnvFromSource) error {
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
		data, exists, err = configMapData(in, name, isOptional(from.ConfigMapRef.Optional))
	case from.SecretRef != nil:
		kind, name = "secret", from.SecretRef.Name
		data, exists, err = secretData(in, name, isOptional(from.SecretRef.Optional))
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
		b.env.Skipped = append(b.env.Skipped, SkippedKeys{Kind: kind, Name: in.Pod.Namespace + "/" + name, Keys: invalid})
	}
	return nil
}

// envValue returns the value of one env entry and whether to set it: a
// literal value expanded over vars, or the value of its source.
func envValue(in *EnvInput, e corev1.EnvVar, vars map[string]string) (string, bool, error) {
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
		v, err := downward.Resource(in.Pod, in.Container, from.ResourceFieldRef, in.Allocatable)
		return v, err == nil, err
	case from.ConfigMapKeyRef != nil:
		ref := from.ConfigMapKeyRef
		data, exists, err := configMapData(in, ref.Name, isOptional(ref.Optional))
		if err != nil || !exists {
			return "", false, err
		}
		return keyValue(data, ref.Key, isOptional(ref.Optional), "ConfigMap", in.Pod.Namespace, ref.Name)
	case from.SecretKeyRef != nil:
		ref := from.SecretKeyRef
		data, exists, err := secretData(in, ref.Name, isOptional(ref.Optional))
		if err != nil || !exists {
			return "", false, err
		}
		return keyValue(data, ref.Key, isOptional(ref.Optional), "Secret", in.Pod.Namespace, ref.Name)
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

// configMapData returns the configMap's data (binaryData is not part of
// the environment) and whether it exists. Not found is an error unless
// optional, with upstream's message (configmap "name" not found).
func configMapData(in *EnvInput, name string, optional bool) (map[string]string, bool, error) {
	if in.Standalone {
		return nil, false, fmt.Errorf("couldn't get configMap %v/%v: configMap references need an API server", in.Pod.Namespace, name)
	}
	if err := in.FetchErrs["configmap/"+name]; err != nil {
		return nil, false, err
	}
	cm := in.ConfigMaps[name]
	if cm == nil {
		if !optional {
			return nil, false, apierrors.NewNotFound(corev1.Resource("configmap"), name)
		}
		return nil, false, nil
	}
	return cm.Data, true, nil
}

// secretData is configMapData for secrets, values as strings.
func secretData(in *EnvInput, name string, optional bool) (map[string]string, bool, error) {
	if in.Standalone {
		return nil, false, fmt.Errorf("couldn't get secret %v/%v: secret references need an API server", in.Pod.Namespace, name)
	}
	if err := in.FetchErrs["secret/"+name]; err != nil {
		return nil, false, err
	}
	s := in.Secrets[name]
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
