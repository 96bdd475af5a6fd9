package admission

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestPortsFit(t *testing.T) {
	type port struct {
		ip    string
		proto corev1.Protocol
		port  int32
	}
	tests := []struct {
		name       string
		used, want []port
		fits       bool
	}{
		{name: "no host ports", fits: true},
		{name: "same port, both wildcard", used: []port{{"", "", 80}}, want: []port{{"", "", 80}}, fits: false},
		{name: "empty protocol is TCP", used: []port{{"", corev1.ProtocolTCP, 80}}, want: []port{{"", "", 80}}, fits: false},
		{name: "other protocol", used: []port{{"", corev1.ProtocolUDP, 80}}, want: []port{{"", corev1.ProtocolTCP, 80}}, fits: true},
		{name: "other port", used: []port{{"", "", 80}}, want: []port{{"", "", 81}}, fits: true},
		{name: "same IP", used: []port{{"10.0.0.1", "", 80}}, want: []port{{"10.0.0.1", "", 80}}, fits: false},
		{name: "other IPs", used: []port{{"10.0.0.1", "", 80}}, want: []port{{"10.0.0.2", "", 80}}, fits: true},
		{name: "wanted wildcard over a used IP", used: []port{{"10.0.0.1", "", 80}}, want: []port{{"0.0.0.0", "", 80}}, fits: false},
		{name: "wanted IP under a used wildcard", used: []port{{"0.0.0.0", "", 80}}, want: []port{{"10.0.0.2", "", 80}}, fits: false},
		{name: "SCTP", used: []port{{"", corev1.ProtocolSCTP, 9}}, want: []port{{"", corev1.ProtocolSCTP, 9}}, fits: false},
		{name: "any of several", used: []port{{"", "", 80}, {"", "", 443}}, want: []port{{"", "", 8443}, {"", "", 443}}, fits: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			active := testPod("old")
			for _, p := range tt.used {
				withHostPort(active, p.ip, p.proto, p.port)
			}
			pod := testPod("new")
			for _, p := range tt.want {
				withHostPort(pod, p.ip, p.proto, p.port)
			}
			if got := portsFit(pod, []*corev1.Pod{active}); got != tt.fits {
				t.Errorf("portsFit = %v, want %v", got, tt.fits)
			}
		})
	}
}

func TestContainerPortsWithoutHostPortDoNotConflict(t *testing.T) {
	active := testPod("old")
	active.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80}}
	pod := testPod("new")
	pod.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80}}
	if !portsFit(pod, []*corev1.Pod{active}) {
		t.Error("container ports without a host port conflict")
	}
}

func TestSidecarHostPortsAreReserved(t *testing.T) {
	withInit := func(name string, restart *corev1.ContainerRestartPolicy) *corev1.Pod {
		p := testPod(name)
		p.Spec.InitContainers = []corev1.Container{{
			Name:          "init",
			RestartPolicy: restart,
			Ports:         []corev1.ContainerPort{{ContainerPort: 9000, HostPort: 9000}},
		}}
		return p
	}
	always := ptrTo(corev1.ContainerRestartPolicyAlways)
	tests := []struct {
		name         string
		active, want *corev1.Pod
		fits         bool
	}{
		{"active sidecar holds the port", withInit("old", always), withHostPort(testPod("new"), "", "", 9000), false},
		{"wanted sidecar needs the port", withHostPort(testPod("old"), "", "", 9000), withInit("new", always), false},
		{"init container of an active pod holds nothing", withInit("old", nil), withHostPort(testPod("new"), "", "", 9000), true},
		{"wanted init container needs nothing", withHostPort(testPod("old"), "", "", 9000), withInit("new", nil), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := portsFit(tt.want, []*corev1.Pod{tt.active}); got != tt.fits {
				t.Errorf("portsFit = %v, want %v", got, tt.fits)
			}
		})
	}
}
