package podplan

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// TestDecideSandbox: why a new sandbox is needed, with the attempt it
// gets, in upstream's order of checks.
func TestDecideSandbox(t *testing.T) {
	type view struct {
		Why     string
		Attempt uint32
		Keep    string // the kept sandbox's ID
	}
	noIP := readySandbox("s2", 2)
	noIP.IPs = nil
	hostNet := readySandbox("s2", 2)
	hostNet.HostNetwork = true
	for _, tc := range []struct {
		name string
		host bool
		rt   *runtimestate.Pod
		want view
	}{
		{"nothing yet", false, nil, view{SandboxNotReadyMsgNoPodSandbox, 0, ""}},
		{"ready", false, rtPod(sandboxes(readySandbox("s2", 2))), view{"", 2, "s2"}},
		{"latest exited", false, rtPod(sandboxes(deadSandbox("s2", 2))), view{SandboxNotReadyMsgSandboxNotReady, 3, ""}},
		{"two ready", false, rtPod(sandboxes(readySandbox("s2", 2), readySandbox("s1", 1))), view{SandboxNotReadyMsgMultipleSandboxes, 3, ""}},
		{"two ready win over a missing IP", false, rtPod(sandboxes(noIP, readySandbox("s1", 1))), view{SandboxNotReadyMsgMultipleSandboxes, 3, ""}},
		{"host network asked", true, rtPod(sandboxes(readySandbox("s2", 2))), view{SandboxNotReadyMsgNetworkNamespaceMode, 3, ""}},
		{"host network kept", true, rtPod(sandboxes(hostNet)), view{"", 2, "s2"}},
		{"no IP", false, rtPod(sandboxes(noIP)), view{SandboxNotReadyMsgNoIPAddress, 3, ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := newPod(corev1.RestartPolicyAlways, nil, []string{"app"})
			pod.Spec.HostNetwork = tc.host
			v := DecideSandbox(pod, tc.rt)
			got := view{Why: v.Why, Attempt: v.Attempt}
			if v.Current != nil {
				got.Keep = v.Current.ID
			}
			if v.Create() != (got.Keep == "") || (got.Why == "") != (got.Keep != "") {
				t.Errorf("verdict %+v is inconsistent", v)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("DecideSandbox (-want +got):\n%s", diff)
			}
		})
	}
}
