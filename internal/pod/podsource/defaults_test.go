package podsource

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestSetPodDefaultsMinimalPod(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: "app", Image: "nginx:1.27",
		Ports: []corev1.ContainerPort{{ContainerPort: 80}},
	}}}}
	SetPodDefaults(pod)
	want := corev1.PodSpec{
		Containers: []corev1.Container{{
			Name: "app", Image: "nginx:1.27",
			Ports:                    []corev1.ContainerPort{{ContainerPort: 80, Protocol: corev1.ProtocolTCP}},
			ImagePullPolicy:          corev1.PullIfNotPresent,
			TerminationMessagePath:   "/dev/termination-log",
			TerminationMessagePolicy: corev1.TerminationMessageReadFile,
		}},
		RestartPolicy:                 corev1.RestartPolicyAlways,
		DNSPolicy:                     corev1.DNSClusterFirst,
		TerminationGracePeriodSeconds: ptrTo(int64(30)),
		SchedulerName:                 "default-scheduler",
		SecurityContext:               &corev1.PodSecurityContext{},
		EnableServiceLinks:            ptrTo(true),
		Priority:                      ptrTo(int32(0)),
		PreemptionPolicy:              ptrTo(corev1.PreemptLowerPriority),
	}
	if diff := cmp.Diff(want, pod.Spec); diff != "" {
		t.Errorf("defaulted spec (-want +got):\n%s", diff)
	}
	// Idempotent.
	again := pod.DeepCopy()
	SetPodDefaults(again)
	if diff := cmp.Diff(pod, again); diff != "" {
		t.Errorf("second defaulting changed the pod (-first +second):\n%s", diff)
	}
}

func TestSetPodDefaultsCases(t *testing.T) {
	base := func() *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:v1"}}}}
	}
	tests := []struct {
		name   string
		mutate func(*corev1.Pod)
		check  func(t *testing.T, pod *corev1.Pod)
	}{
		{
			name: "explicit values are kept",
			mutate: func(p *corev1.Pod) {
				p.Spec.RestartPolicy = corev1.RestartPolicyNever
				p.Spec.DNSPolicy = corev1.DNSDefault
			},
			check: func(t *testing.T, p *corev1.Pod) {
				if p.Spec.RestartPolicy != corev1.RestartPolicyNever || p.Spec.DNSPolicy != corev1.DNSDefault {
					t.Errorf("got restartPolicy %q dnsPolicy %q", p.Spec.RestartPolicy, p.Spec.DNSPolicy)
				}
			},
		},
		{
			name: "host network defaults host ports",
			mutate: func(p *corev1.Pod) {
				p.Spec.HostNetwork = true
				p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 8080}, {ContainerPort: 9090, HostPort: 9090}}
			},
			check: func(t *testing.T, p *corev1.Pod) {
				got := []int32{p.Spec.Containers[0].Ports[0].HostPort, p.Spec.Containers[0].Ports[1].HostPort}
				if diff := cmp.Diff([]int32{8080, 9090}, got); diff != "" {
					t.Errorf("host ports (-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "no host network leaves host port unset",
			mutate: func(p *corev1.Pod) {
				p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 8080}}
			},
			check: func(t *testing.T, p *corev1.Pod) {
				if hp := p.Spec.Containers[0].Ports[0].HostPort; hp != 0 {
					t.Errorf("hostPort = %d, want 0", hp)
				}
			},
		},
		{
			name: "requests default to limits, rounded to milli, resize policy added",
			mutate: func(p *corev1.Pod) {
				p.Spec.Containers[0].Resources = corev1.ResourceRequirements{
					Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("0.0001")},
				}
			},
			check: func(t *testing.T, p *corev1.Pod) {
				c := p.Spec.Containers[0]
				if got := c.Resources.Requests.Cpu().String(); got != "1m" {
					t.Errorf("cpu request = %s, want 1m (rounded up)", got)
				}
				if got := c.Resources.Requests.Memory().String(); got != "64Mi" {
					t.Errorf("memory request = %s, want 64Mi from the limit", got)
				}
				want := []corev1.ContainerResizePolicy{
					{ResourceName: corev1.ResourceCPU, RestartPolicy: corev1.NotRequired},
					{ResourceName: corev1.ResourceMemory, RestartPolicy: corev1.NotRequired},
				}
				if diff := cmp.Diff(want, c.ResizePolicy); diff != "" {
					t.Errorf("resize policy (-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "probes and lifecycle handlers",
			mutate: func(p *corev1.Pod) {
				p.Spec.Containers[0].LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{}}}
				p.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{}}}
			},
			check: func(t *testing.T, p *corev1.Pod) {
				want := &corev1.Probe{
					ProbeHandler:   corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Scheme: corev1.URISchemeHTTP}},
					TimeoutSeconds: 1, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 3,
				}
				if diff := cmp.Diff(want, p.Spec.Containers[0].LivenessProbe); diff != "" {
					t.Errorf("probe (-want +got):\n%s", diff)
				}
				if got := p.Spec.Containers[0].Lifecycle.PreStop.HTTPGet.Path; got != "/" {
					t.Errorf("preStop path = %q", got)
				}
			},
		},
		{
			name: "volumes",
			mutate: func(p *corev1.Pod) {
				p.Spec.Volumes = []corev1.Volume{
					{Name: "none"},
					{Name: "secret", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s"}}},
					{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/etc"}}},
					{Name: "token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
						Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "t"}}},
					}}},
				}
			},
			check: func(t *testing.T, p *corev1.Pod) {
				v := p.Spec.Volumes
				if v[0].EmptyDir == nil {
					t.Errorf("volume without source: want emptyDir, got %+v", v[0].VolumeSource)
				}
				if m := v[1].Secret.DefaultMode; m == nil || *m != 0o644 {
					t.Errorf("secret defaultMode = %v, want 0644", m)
				}
				if ty := v[2].HostPath.Type; ty == nil || *ty != corev1.HostPathUnset {
					t.Errorf("hostPath type = %v, want unset", ty)
				}
				if e := v[3].Projected.Sources[0].ServiceAccountToken.ExpirationSeconds; e == nil || *e != 3600 {
					t.Errorf("token expiration = %v, want 3600", e)
				}
			},
		},
		{
			name:   "built-in priority class",
			mutate: func(p *corev1.Pod) { p.Spec.PriorityClassName = "system-node-critical" },
			check: func(t *testing.T, p *corev1.Pod) {
				if p.Spec.Priority == nil || *p.Spec.Priority != 2000001000 {
					t.Errorf("priority = %v, want 2000001000", p.Spec.Priority)
				}
			},
		},
		{
			name:   "unknown priority class stays unresolved",
			mutate: func(p *corev1.Pod) { p.Spec.PriorityClassName = "custom" },
			check: func(t *testing.T, p *corev1.Pod) {
				if p.Spec.Priority != nil {
					t.Errorf("priority = %d, want nil", *p.Spec.Priority)
				}
			},
		},
		{
			name: "env fieldRef apiVersion",
			mutate: func(p *corev1.Pod) {
				p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "NODE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}}
			},
			check: func(t *testing.T, p *corev1.Pod) {
				if got := p.Spec.Containers[0].Env[0].ValueFrom.FieldRef.APIVersion; got != "v1" {
					t.Errorf("fieldRef apiVersion = %q, want v1", got)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := base()
			tt.mutate(pod)
			SetPodDefaults(pod)
			tt.check(t, pod)
		})
	}
}

func TestImagePullPolicyDefault(t *testing.T) {
	tests := []struct {
		image string
		want  corev1.PullPolicy
	}{
		{"nginx", corev1.PullAlways},
		{"nginx:latest", corev1.PullAlways},
		{"nginx:1.27", corev1.PullIfNotPresent},
		{"registry.local:5000/team/app", corev1.PullAlways},
		{"registry.local:5000/team/app:v2", corev1.PullIfNotPresent},
		{"nginx@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", corev1.PullIfNotPresent},
		{"nginx:latest@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", corev1.PullAlways},
	}
	for _, tt := range tests {
		t.Run(tt.image, func(t *testing.T) {
			c := corev1.Container{Image: tt.image}
			setContainerDefaults(&c, false)
			if c.ImagePullPolicy != tt.want {
				t.Errorf("imagePullPolicy = %q, want %q", c.ImagePullPolicy, tt.want)
			}
		})
	}
}
