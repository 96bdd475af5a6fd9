package declaredfeatures

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	ndf "k8s.io/component-helpers/nodedeclaredfeatures"
	"k8s.io/component-helpers/nodedeclaredfeatures/features"
	"k8s.io/component-helpers/nodedeclaredfeatures/types"

	"github.com/berthk8s/berth/internal/config"
	"github.com/berthk8s/berth/internal/pod/admission"
)

func TestAdmit(t *testing.T) {
	restartAll := func(p *corev1.Pod) {
		p.Spec.Containers[0].RestartPolicyRules = []corev1.ContainerRestartRule{{
			Action:    corev1.ContainerRestartRuleActionRestartAllContainers,
			ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{Operator: corev1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}},
		}}
	}
	usernsHostNetwork := func(p *corev1.Pod) {
		p.Spec.HostNetwork = true
		p.Spec.HostUsers = new(false)
	}
	bindOptions := func(p *corev1.Pod) {
		p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
			Name: "debug", VolumeMounts: []corev1.VolumeMount{{Name: "v", MountPath: "/v", BindMountOptions: []string{string(corev1.BindMountOptionNoExec)}}},
		}}}
	}
	rejected := func(missing string) admission.Result {
		return admission.Result{Reason: "PodFeatureUnsupported", Message: "Pod requires node features that are not available: " + missing}
	}
	tests := []struct {
		name   string
		gates  ndf.FeatureGate
		mutate []func(*corev1.Pod)
		want   admission.Result
	}{
		{name: "needs nothing", gates: allGates(), want: admission.Result{Admit: true}},
		{name: "needs nothing, node declares nothing", gates: types.FeatureGateMap{}, want: admission.Result{Admit: true}},
		{name: "restart all containers, declared", gates: allGates(), mutate: []func(*corev1.Pod){restartAll}, want: admission.Result{Admit: true}},
		{name: "restart all containers, not declared", gates: types.FeatureGateMap{}, mutate: []func(*corev1.Pod){restartAll},
			want: rejected("RestartAllContainersOnContainerExits")},
		{name: "user namespace with host network: discovered, not implemented", gates: allGates(), mutate: []func(*corev1.Pod){usernsHostNetwork},
			want: rejected("UserNamespacesHostNetworkSupport")},
		{name: "bind mount options of an ephemeral container", gates: allGates(), mutate: []func(*corev1.Pod){bindOptions},
			want: rejected("VolumeBindMountOptions")},
		{name: "every missing feature named, sorted", gates: types.FeatureGateMap{}, mutate: []func(*corev1.Pod){usernsHostNetwork, restartAll, bindOptions},
			want: rejected("RestartAllContainersOnContainerExits, UserNamespacesHostNetworkSupport, VolumeBindMountOptions")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := New(Config{Registry: features.AllFeatures, Gates: tt.gates, Version: config.KubernetesVersion, Runtime: allRuntime()})
			if err != nil {
				t.Fatal(err)
			}
			pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", RestartPolicy: new(corev1.ContainerRestartPolicyNever)}}}}
			for _, m := range tt.mutate {
				m(pod)
			}
			before := pod.DeepCopy()
			if diff := cmp.Diff(tt.want, d.Admit(pod)); diff != "" {
				t.Errorf("Admit (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, pod); diff != "" {
				t.Errorf("Admit modified the pod:\n%s", diff)
			}
		})
	}
}
