package kuberuntime

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// fakeEnvSource serves configMaps, secrets and services from memory and
// counts the look-ups.
type fakeEnvSource struct {
	configMaps  map[string]*corev1.ConfigMap // by namespace/name
	secrets     map[string]*corev1.Secret
	services    []*corev1.Service
	unsynced    bool
	allocatable corev1.ResourceList
	gets        int
}

func (f *fakeEnvSource) ConfigMap(_ context.Context, ns, name string) (*corev1.ConfigMap, error) {
	f.gets++
	if cm, ok := f.configMaps[ns+"/"+name]; ok {
		return cm, nil
	}
	return nil, apierrors.NewNotFound(corev1.Resource("configmaps"), name)
}

func (f *fakeEnvSource) Secret(_ context.Context, ns, name string) (*corev1.Secret, error) {
	f.gets++
	if s, ok := f.secrets[ns+"/"+name]; ok {
		return s, nil
	}
	return nil, apierrors.NewNotFound(corev1.Resource("secrets"), name)
}

func (f *fakeEnvSource) Services() ([]*corev1.Service, bool) { return f.services, !f.unsynced }

func (f *fakeEnvSource) NodeAllocatable() corev1.ResourceList { return f.allocatable }

func service(ns, name, ip string, ports ...corev1.ServicePort) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.ServiceSpec{ClusterIP: ip, Ports: ports},
	}
}

func baseEnvSource() *fakeEnvSource {
	return &fakeEnvSource{
		configMaps: map[string]*corev1.ConfigMap{
			"default/cm": {Data: map[string]string{"color": "blue", "size": "L", "bad=key": "x"}},
		},
		secrets: map[string]*corev1.Secret{
			"default/sec": {Data: map[string][]byte{"password": []byte("s3cret")}},
		},
		services: []*corev1.Service{
			service("default", "kubernetes", "10.0.0.1", corev1.ServicePort{Name: "https", Port: 443, Protocol: corev1.ProtocolTCP}),
		},
		allocatable: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"),
			corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
		},
	}
}

var kubernetesVars = []string{
	"KUBERNETES_PORT", "tcp://10.0.0.1:443",
	"KUBERNETES_PORT_443_TCP", "tcp://10.0.0.1:443",
	"KUBERNETES_PORT_443_TCP_ADDR", "10.0.0.1",
	"KUBERNETES_PORT_443_TCP_PORT", "443",
	"KUBERNETES_PORT_443_TCP_PROTO", "tcp",
	"KUBERNETES_SERVICE_HOST", "10.0.0.1",
	"KUBERNETES_SERVICE_PORT", "443",
	"KUBERNETES_SERVICE_PORT_HTTPS", "443",
}

func cmKey(name, key string, optional bool) *corev1.EnvVarSource {
	return &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key, Optional: ptr.To(optional)}}
}

func secretKey(name, key string, optional bool) *corev1.EnvVarSource {
	return &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key, Optional: ptr.To(optional)}}
}

func fieldRef(path string) *corev1.EnvVarSource {
	return &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}
}

func resourceRef(res, divisor string) *corev1.EnvVarSource {
	ref := &corev1.ResourceFieldSelector{Resource: res}
	if divisor != "" {
		ref.Divisor = resource.MustParse(divisor)
	}
	return &corev1.EnvVarSource{ResourceFieldRef: ref}
}

func TestResolveEnv(t *testing.T) {
	tests := []struct {
		name     string
		mutate   func(*envInput, *fakeEnvSource)
		want     []string // name, value pairs in CRI order
		wantErr  string
		wantSkip []skippedKeys
		// wantSet overrides values of want in place.
		wantSet map[string]string
	}{
		{name: "no env: the master service only", want: withMaster()},
		{
			name: "literal values, redefinition and expansion",
			mutate: func(in *envInput, _ *fakeEnvSource) {
				in.Container.Env = []corev1.EnvVar{
					{Name: "HOST", Value: "db"}, {Name: "URL", Value: "http://$(HOST):$(PORT)"},
					{Name: "PORT", Value: "5432"}, {Name: "HOST", Value: "db2"},
					{Name: "API", Value: "https://$(KUBERNETES_SERVICE_HOST)"}, {Name: "EMPTY"},
				}
			},
			want: withMaster("HOST", "db2", "URL", "http://db:$(PORT)", "PORT", "5432", "API", "https://10.0.0.1", "EMPTY", ""),
		},
		{
			name: "fieldRefs",
			mutate: func(in *envInput, _ *fakeEnvSource) {
				in.Container.Env = nil
				for _, p := range []string{"metadata.name", "metadata.namespace", "metadata.uid", "metadata.labels['app']",
					"metadata.annotations['note']", "spec.nodeName", "spec.serviceAccountName", "status.hostIP",
					"status.hostIPs", "status.podIP", "status.podIPs", "metadata.labels['missing']"} {
					in.Container.Env = append(in.Container.Env, corev1.EnvVar{Name: "F" + string(rune('A'+len(in.Container.Env))), ValueFrom: fieldRef(p)})
				}
			},
			want: withMaster("FA", "web", "FB", "default", "FC", "uid-1", "FD", "shop", "FE", "hello", "FF", "node-a",
				"FG", "builder", "FH", "192.0.2.10", "FI", "192.0.2.10,2001:db8::10", "FJ", "10.1.0.5",
				"FK", "10.1.0.5,fd00::5", "FL", ""),
		},
		{
			name: "unsupported fieldPath",
			mutate: func(in *envInput, _ *fakeEnvSource) {
				in.Container.Env = []corev1.EnvVar{{Name: "X", ValueFrom: fieldRef("spec.hostname")}}
			},
			wantErr: "unsupported fieldPath: spec.hostname",
		},
		{
			name: "resourceFieldRefs: limits default to the node's allocatable",
			mutate: func(in *envInput, _ *fakeEnvSource) {
				in.Container.Resources = corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")},
				}
				in.Container.Env = []corev1.EnvVar{
					{Name: "CPU_REQ", ValueFrom: resourceRef("requests.cpu", "")},
					{Name: "CPU_REQ_M", ValueFrom: resourceRef("requests.cpu", "1m")},
					{Name: "CPU_LIM", ValueFrom: resourceRef("limits.cpu", "")},
					{Name: "MEM_LIM_MI", ValueFrom: resourceRef("limits.memory", "1Mi")},
					{Name: "MEM_REQ", ValueFrom: resourceRef("requests.memory", "")},
					{Name: "EPH_LIM_GI", ValueFrom: resourceRef("limits.ephemeral-storage", "1Gi")},
				}
			},
			want: withMaster("CPU_REQ", "1", "CPU_REQ_M", "250", "CPU_LIM", "4", "MEM_LIM_MI", "128",
				"MEM_REQ", "67108864", "EPH_LIM_GI", "100"),
		},
		{
			name: "configMap and secret keys, optional missing ones unset",
			mutate: func(in *envInput, _ *fakeEnvSource) {
				in.Container.Env = []corev1.EnvVar{
					{Name: "COLOR", ValueFrom: cmKey("cm", "color", false)},
					{Name: "PASSWORD", ValueFrom: secretKey("sec", "password", false)},
					{Name: "NOKEY", ValueFrom: cmKey("cm", "nope", true)},
					{Name: "NOCM", ValueFrom: cmKey("nope", "k", true)},
					{Name: "NOSECRET", ValueFrom: secretKey("nope", "k", true)},
				}
			},
			want: withMaster("COLOR", "blue", "PASSWORD", "s3cret"),
		},
		{
			name: "required configMap missing",
			mutate: func(in *envInput, _ *fakeEnvSource) {
				in.Container.Env = []corev1.EnvVar{{Name: "X", ValueFrom: cmKey("x", "k", false)}}
			},
			wantErr: `configmap "x" not found`,
		},
		{
			name: "required configMap key missing",
			mutate: func(in *envInput, _ *fakeEnvSource) {
				in.Container.Env = []corev1.EnvVar{{Name: "X", ValueFrom: cmKey("cm", "k", false)}}
			},
			wantErr: "couldn't find key k in ConfigMap default/cm",
		},
		{
			name: "required secret missing after an optional reference to it",
			mutate: func(in *envInput, _ *fakeEnvSource) {
				in.Container.Env = []corev1.EnvVar{{Name: "A", ValueFrom: secretKey("x", "k", true)}, {Name: "B", ValueFrom: secretKey("x", "k", false)}}
			},
			wantErr: `secret "x" not found`,
		},
		{
			name: "required secret key missing",
			mutate: func(in *envInput, _ *fakeEnvSource) {
				in.Container.Env = []corev1.EnvVar{{Name: "X", ValueFrom: secretKey("sec", "k", false)}}
			},
			wantErr: "couldn't find key k in Secret default/sec",
		},
		{
			name: "envFrom with prefix, invalid keys skipped, env wins",
			mutate: func(in *envInput, _ *fakeEnvSource) {
				in.Container.EnvFrom = []corev1.EnvFromSource{
					{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}}},
					{Prefix: "S_", SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "sec"}}},
					{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "nope"}, Optional: ptr.To(true)}},
				}
				in.Container.Env = []corev1.EnvVar{{Name: "size", Value: "$(color)-XL"}, {Name: "color", ValueFrom: cmKey("cm", "nope", true)}}
			},
			want:     withMaster("color", "blue", "size", "blue-XL", "S_password", "s3cret"),
			wantSkip: []skippedKeys{{Kind: "configMap", Name: "default/cm", Keys: []string{"bad=key"}}},
		},
		{
			name: "envFrom of a missing required secret",
			mutate: func(in *envInput, _ *fakeEnvSource) {
				in.Container.EnvFrom = []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "gone"}}}}
			},
			wantErr: `secret "gone" not found`,
		},
		{
			name: "env replaces a service variable",
			mutate: func(in *envInput, _ *fakeEnvSource) {
				in.Container.Env = []corev1.EnvVar{{Name: "KUBERNETES_SERVICE_PORT", Value: "8443"}}
			},
			want:    withMaster(), // KUBERNETES_SERVICE_PORT keeps its place, with 8443
			wantSet: map[string]string{"KUBERNETES_SERVICE_PORT": "8443"},
		},
		{
			name: "services of the pod's namespace with several ports; headless and other namespaces ignored",
			mutate: func(in *envInput, src *fakeEnvSource) {
				src.services = append(src.services,
					service("default", "my-db", "10.0.0.20",
						corev1.ServicePort{Name: "sql", Port: 5432},
						corev1.ServicePort{Name: "metrics-udp", Port: 9000, Protocol: corev1.ProtocolUDP}),
					service("default", "headless", corev1.ClusterIPNone, corev1.ServicePort{Port: 80}),
					service("other", "elsewhere", "10.0.0.30", corev1.ServicePort{Port: 80}),
				)
			},
			want: withMaster(
				"MY_DB_PORT", "tcp://10.0.0.20:5432",
				"MY_DB_PORT_5432_TCP", "tcp://10.0.0.20:5432",
				"MY_DB_PORT_5432_TCP_ADDR", "10.0.0.20",
				"MY_DB_PORT_5432_TCP_PORT", "5432",
				"MY_DB_PORT_5432_TCP_PROTO", "tcp",
				"MY_DB_PORT_9000_UDP", "udp://10.0.0.20:9000",
				"MY_DB_PORT_9000_UDP_ADDR", "10.0.0.20",
				"MY_DB_PORT_9000_UDP_PORT", "9000",
				"MY_DB_PORT_9000_UDP_PROTO", "udp",
				"MY_DB_SERVICE_HOST", "10.0.0.20",
				"MY_DB_SERVICE_PORT", "5432",
				"MY_DB_SERVICE_PORT_METRICS_UDP", "9000",
				"MY_DB_SERVICE_PORT_SQL", "5432",
			),
		},
		{
			name: "enableServiceLinks false keeps the master service only",
			want: withMaster(),
			mutate: func(in *envInput, src *fakeEnvSource) {
				in.Pod.Spec.EnableServiceLinks = ptr.To(false)
				src.services = append(src.services, service("default", "web", "10.0.0.21", corev1.ServicePort{Port: 80}))
			},
		},
		{
			name: "services not read yet refuse an API pod",
			mutate: func(in *envInput, src *fakeEnvSource) {
				src.unsynced = true
				in.Pod.Annotations[podutil.ConfigSourceAnnotation] = podutil.APISource
			},
			wantErr: "services have not yet been read at least once",
		},
		{
			name: "services not read yet: a static pod starts without them",
			mutate: func(in *envInput, src *fakeEnvSource) {
				src.unsynced = true
				in.Pod.Annotations[podutil.ConfigSourceAnnotation] = "file"
			},
			want: []string{},
		},
		{
			name: "no API server: fieldRefs work, no services",
			mutate: func(in *envInput, _ *fakeEnvSource) {
				in.Source = nil
				in.Container.Env = []corev1.EnvVar{{Name: "NODE", ValueFrom: fieldRef("spec.nodeName")}}
			},
			want: []string{"NODE", "node-a"},
		},
		{
			name: "no API server: configMap references fail",
			mutate: func(in *envInput, _ *fakeEnvSource) {
				in.Source = nil
				in.Container.Env = []corev1.EnvVar{{Name: "X", ValueFrom: cmKey("cm", "color", true)}}
			},
			wantErr: "couldn't get configMap default/cm: configMap references need an API server",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := basePod()
			pod.Labels = map[string]string{"app": "shop"}
			pod.Annotations = map[string]string{"note": "hello"}
			pod.Spec.NodeName, pod.Spec.ServiceAccountName = "node-a", "builder"
			src := baseEnvSource()
			in := envInput{Pod: pod, Container: &pod.Spec.Containers[0], Source: src,
				PodIPs: []string{"10.1.0.5", "fd00::5"}, HostIPs: []string{"192.0.2.10", "2001:db8::10"}}
			if tt.mutate != nil {
				tt.mutate(&in, src)
			}
			got, err := resolveEnv(context.Background(), in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			wantPairs := tt.want
			for i := 0; i < len(wantPairs); i += 2 {
				if v, ok := tt.wantSet[wantPairs[i]]; ok {
					wantPairs[i+1] = v
				}
			}
			want := kv(wantPairs...)
			vars := map[string]string{}
			for i := 0; i < len(wantPairs); i += 2 {
				vars[wantPairs[i]] = wantPairs[i+1]
			}
			if diff := cmp.Diff(envPairs(want), envPairs(got.Envs)); diff != "" {
				t.Errorf("Envs (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(vars, got.Vars); diff != "" {
				t.Errorf("Vars (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantSkip, got.Skipped); diff != "" {
				t.Errorf("Skipped (-want +got):\n%s", diff)
			}
		})
	}
}

// withMaster prepends the kubernetes service's variables to pairs.
func withMaster(pairs ...string) []string {
	return append(append([]string{}, kubernetesVars...), pairs...)
}

// envPairs flattens a CRI list into name, value pairs.
func envPairs(kvs []*runtimeapi.KeyValue) []string {
	out := []string{}
	for _, e := range kvs {
		out = append(out, e.Key, string(e.Value))
	}
	return out
}

func TestSyncPodEnv(t *testing.T) {
	e := newEnv(t)
	e.fake.AddImage("busybox:1.36")
	e.m.cfg.Env = baseEnvSource()
	e.m.cfg.HostIPs = []string{"192.0.2.10"}
	pod := basePod()
	pod.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}}}}
	pod.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "IP", ValueFrom: fieldRef("status.podIP")}}
	if f := e.sync(pod); len(f) != 0 {
		t.Fatalf("failures = %+v", f)
	}
	if evs := e.events.take(); !hasEvent(evs, "Warning InvalidEnvironmentVariableNames Keys [bad=key] from the EnvFrom configMap default/cm were skipped since they are considered invalid environment variable names.") {
		t.Errorf("events %q lack InvalidEnvironmentVariableNames", evs)
	}

	rt := e.status(pod)
	sb := rt.LatestSandbox()
	if sb == nil || len(sb.IPs) == 0 {
		t.Fatalf("sandbox = %+v, want one with IPs", sb)
	}
	for _, created := range []bool{true, false} {
		if got := e.m.sandboxIPs(e.ctx, pod, rt, sb.ID, created); !cmp.Equal(got, sb.IPs) {
			t.Errorf("sandboxIPs(created=%v) = %q, want %q", created, got, sb.IPs)
		}
	}
	pod.Spec.HostNetwork = true
	if got := e.m.sandboxIPs(e.ctx, pod, rt, sb.ID, false); !cmp.Equal(got, []string{"192.0.2.10"}) {
		t.Errorf("host-network sandboxIPs = %q, want the host's", got)
	}
}
