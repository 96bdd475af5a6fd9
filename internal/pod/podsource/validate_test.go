package podsource

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// validPod is a defaulted pod that passes ValidatePod.
func validPod() *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-node1", Namespace: "default", UID: "0123456789abcdef0123456789abcdef"},
		Spec: corev1.PodSpec{
			Volumes:        []corev1.Volume{{Name: "data"}},
			InitContainers: []corev1.Container{{Name: "init", Image: "busybox:1"}},
			Containers: []corev1.Container{{
				Name: "app", Image: "app:v1",
				Ports:        []corev1.ContainerPort{{Name: "http", ContainerPort: 80}},
				Env:          []corev1.EnvVar{{Name: "MODE", Value: "x"}},
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
			}},
		},
	}
	SetPodDefaults(pod)
	return pod
}

func TestValidatePod(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*corev1.Pod)
		// want lists "<type> <field>" of each error.
		want []string
	}{
		{name: "valid", mutate: func(*corev1.Pod) {}},
		{name: "own user namespace", mutate: func(p *corev1.Pod) { p.Spec.HostUsers = new(false) }},
		{name: "own user namespace with host namespaces", mutate: func(p *corev1.Pod) {
			p.Spec.HostUsers = new(false)
			p.Spec.HostNetwork, p.Spec.HostPID, p.Spec.HostIPC = true, true, true
		}, want: []string{"FieldValueForbidden spec.hostNetwork", "FieldValueForbidden spec.HostPID", "FieldValueForbidden spec.HostIPC"}},
		{name: "own user namespace with volumeDevices", mutate: func(p *corev1.Pod) {
			p.Spec.HostUsers = new(false)
			p.Spec.Containers[0].VolumeDevices = []corev1.VolumeDevice{{Name: "data", DevicePath: "/dev/xvda"}}
		}, want: []string{"FieldValueForbidden spec.containers[0].volumeDevices"}},
		{name: "host namespaces with hostUsers true", mutate: func(p *corev1.Pod) {
			p.Spec.HostUsers = new(true)
			p.Spec.HostPID = true
		}},
		{name: "bad name", mutate: func(p *corev1.Pod) { p.Name = "Web_1" }, want: []string{"FieldValueInvalid metadata.name"}},
		{name: "uid that climbs out of the pods directory", mutate: func(p *corev1.Pod) { p.UID = "../../x" }, want: []string{"FieldValueInvalid metadata.uid"}},
		{name: "missing uid", mutate: func(p *corev1.Pod) { p.UID = "" }, want: []string{"FieldValueInvalid metadata.uid"}},
		{name: "missing namespace", mutate: func(p *corev1.Pod) { p.Namespace = "" }, want: []string{"FieldValueRequired metadata.namespace"}},
		{name: "bad namespace", mutate: func(p *corev1.Pod) { p.Namespace = "a.b" }, want: []string{"FieldValueInvalid metadata.namespace"}},
		{name: "ephemeral containers", mutate: func(p *corev1.Pod) {
			p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debugger", Image: "busybox"}}}
		}, want: []string{"FieldValueForbidden spec.ephemeralContainers"}},
		{name: "no containers", mutate: func(p *corev1.Pod) { p.Spec.Containers = nil }, want: []string{"FieldValueRequired spec.containers"}},
		{name: "bad restart policy", mutate: func(p *corev1.Pod) { p.Spec.RestartPolicy = "Sometimes" }, want: []string{"FieldValueNotSupported spec.restartPolicy"}},
		{name: "bad dns policy", mutate: func(p *corev1.Pod) { p.Spec.DNSPolicy = "Google" }, want: []string{"FieldValueNotSupported spec.dnsPolicy"}},
		{name: "dns none without config", mutate: func(p *corev1.Pod) { p.Spec.DNSPolicy = corev1.DNSNone }, want: []string{"FieldValueRequired spec.dnsConfig.nameservers"}},
		{name: "container name missing", mutate: func(p *corev1.Pod) { p.Spec.Containers[0].Name = "" }, want: []string{"FieldValueRequired spec.containers[0].name"}},
		{name: "container name not a label", mutate: func(p *corev1.Pod) { p.Spec.Containers[0].Name = "App" }, want: []string{"FieldValueInvalid spec.containers[0].name"}},
		{name: "container name clashes with init container", mutate: func(p *corev1.Pod) { p.Spec.Containers[0].Name = "init" }, want: []string{"FieldValueDuplicate spec.containers[0].name"}},
		{name: "image missing", mutate: func(p *corev1.Pod) { p.Spec.InitContainers[0].Image = "" }, want: []string{"FieldValueRequired spec.initContainers[0].image"}},
		{name: "image with spaces", mutate: func(p *corev1.Pod) { p.Spec.Containers[0].Image = " app:v1" }, want: []string{"FieldValueInvalid spec.containers[0].image"}},
		{name: "bad pull policy", mutate: func(p *corev1.Pod) { p.Spec.Containers[0].ImagePullPolicy = "Sometimes" }, want: []string{"FieldValueNotSupported spec.containers[0].imagePullPolicy"}},
		{name: "init container restart policy", mutate: func(p *corev1.Pod) {
			p.Spec.InitContainers[0].RestartPolicy = ptrTo(corev1.ContainerRestartPolicyNever)
		}, want: []string{"FieldValueNotSupported spec.initContainers[0].restartPolicy"}},
		{name: "port out of range", mutate: func(p *corev1.Pod) { p.Spec.Containers[0].Ports[0].ContainerPort = 70000 }, want: []string{"FieldValueInvalid spec.containers[0].ports[0].containerPort"}},
		{name: "port missing", mutate: func(p *corev1.Pod) { p.Spec.Containers[0].Ports[0].ContainerPort = 0 }, want: []string{"FieldValueRequired spec.containers[0].ports[0].containerPort"}},
		{name: "host port out of range", mutate: func(p *corev1.Pod) { p.Spec.Containers[0].Ports[0].HostPort = -1 }, want: []string{"FieldValueInvalid spec.containers[0].ports[0].hostPort"}},
		{name: "duplicate port name", mutate: func(p *corev1.Pod) {
			p.Spec.Containers[0].Ports = append(p.Spec.Containers[0].Ports, corev1.ContainerPort{Name: "http", ContainerPort: 81, Protocol: corev1.ProtocolTCP})
		}, want: []string{"FieldValueDuplicate spec.containers[0].ports[1].name"}},
		{name: "bad protocol", mutate: func(p *corev1.Pod) { p.Spec.Containers[0].Ports[0].Protocol = "ICMP" }, want: []string{"FieldValueNotSupported spec.containers[0].ports[0].protocol"}},
		{name: "env name with =", mutate: func(p *corev1.Pod) { p.Spec.Containers[0].Env[0].Name = "A=B" }, want: []string{"FieldValueInvalid spec.containers[0].env[0].name"}},
		{name: "env value and valueFrom", mutate: func(p *corev1.Pod) {
			p.Spec.Containers[0].Env[0].ValueFrom = &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}
		}, want: []string{"FieldValueInvalid spec.containers[0].env[0].valueFrom"}},
		{name: "negative quantity", mutate: func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("-1")}
			p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("-1")}
		}, want: []string{"FieldValueInvalid spec.containers[0].resources.limits[cpu]", "FieldValueInvalid spec.containers[0].resources.requests[cpu]"}},
		{name: "request above limit", mutate: func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Mi")}
			p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Mi")}
		}, want: []string{"FieldValueInvalid spec.containers[0].resources.requests[memory]"}},
		{name: "mount of unknown volume", mutate: func(p *corev1.Pod) { p.Spec.Containers[0].VolumeMounts[0].Name = "other" }, want: []string{"FieldValueNotFound spec.containers[0].volumeMounts[0].name"}},
		{name: "duplicate volume", mutate: func(p *corev1.Pod) {
			p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
		}, want: []string{"FieldValueDuplicate spec.volumes[1].name"}},
		{name: "volume with two sources", mutate: func(p *corev1.Pod) {
			p.Spec.Volumes[0].HostPath = &corev1.HostPathVolumeSource{Path: "/x"}
		}, want: []string{"FieldValueInvalid spec.volumes[0]"}},
		{name: "bad label", mutate: func(p *corev1.Pod) { p.Labels = map[string]string{"a b": "c"} }, want: []string{"FieldValueInvalid metadata.labels"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := validPod()
			tt.mutate(pod)
			var got []string
			for _, e := range ValidatePod(pod) {
				got = append(got, string(e.Type)+" "+e.Field)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s\nall: %v", diff, ValidatePod(pod))
			}
		})
	}
}
