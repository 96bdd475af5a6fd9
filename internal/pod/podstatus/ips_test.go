package podstatus

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

func TestPodIPs(t *testing.T) {
	prevIPs := &corev1.PodStatus{PodIP: "10.244.0.9", PodIPs: []corev1.PodIP{{IP: "10.244.0.9"}}}
	notReady := runtimestate.Sandbox{ID: "sb1", State: runtimestate.SandboxNotReady}
	hostNet := func() *corev1.Pod { p := staticPod("app"); p.Spec.HostNetwork = true; return p }
	tests := []struct {
		name     string
		pod      *corev1.Pod
		runtime  *runtimestate.Pod
		previous *corev1.PodStatus
		hostIPs  []string
		want     []string
	}{
		{"ready sandbox", staticPod("app"), rt(sbs(readySandbox("10.244.0.5"))), prevIPs, []string{"10.0.0.1"}, []string{"10.244.0.5"}},
		{"dual stack, v4 node", staticPod("app"), rt(sbs(readySandbox("fd00::5", "10.244.0.5", "10.244.0.6"))), nil, []string{"10.0.0.1"}, []string{"10.244.0.5", "fd00::5"}},
		{"dual stack, v6 node", staticPod("app"), rt(sbs(readySandbox("10.244.0.5", "fd00::5"))), nil, []string{"fd00::1"}, []string{"fd00::5", "10.244.0.5"}},
		{"garbage skipped", staticPod("app"), rt(sbs(readySandbox("nope", "10.244.0.5"))), nil, nil, []string{"10.244.0.5"}},
		{"sandbox stopped keeps previous IPs", staticPod("app"), rt(sbs(notReady)), prevIPs, nil, []string{"10.244.0.9"}},
		{"sandbox gone keeps previous IPs", staticPod("app"), nil, prevIPs, nil, []string{"10.244.0.9"}},
		{"new sandbox ready without IPs yet", staticPod("app"), rt(sbs(readySandbox())), prevIPs, nil, nil},
		{"host network takes node IPs", hostNet(), rt(sbs(runtimestate.Sandbox{ID: "sb1", State: runtimestate.SandboxReady, HostNetwork: true})), nil,
			[]string{"10.0.0.1", "fd00::1"}, []string{"10.0.0.1", "fd00::1"}},
		{"never started", staticPod("app"), nil, nil, []string{"10.0.0.1"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Generate(Input{Pod: tc.pod, Runtime: tc.runtime, Previous: tc.previous, HostIPs: tc.hostIPs, Now: now})
			var ips []string
			for _, ip := range got.PodIPs {
				ips = append(ips, ip.IP)
			}
			if diff := cmp.Diff(tc.want, ips); diff != "" {
				t.Errorf("podIPs mismatch (-want +got):\n%s", diff)
			}
			wantIP := ""
			if len(tc.want) > 0 {
				wantIP = tc.want[0]
			}
			if got.PodIP != wantIP {
				t.Errorf("podIP = %q, want %q", got.PodIP, wantIP)
			}
		})
	}
}

func TestHostIPs(t *testing.T) {
	got := Generate(Input{Pod: staticPod("app"), HostIPs: []string{"10.0.0.1", "fd00::1", "10.0.0.2"}, Now: now})
	if got.HostIP != "10.0.0.1" {
		t.Errorf("hostIP = %q", got.HostIP)
	}
	if diff := cmp.Diff([]corev1.HostIP{{IP: "10.0.0.1"}, {IP: "fd00::1"}}, got.HostIPs); diff != "" {
		t.Errorf("hostIPs mismatch (-want +got):\n%s", diff)
	}
}
