package podstatus

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// TestWaitingReasons maps plan, runtime and start-failure states to the
// reason and message of each condition berth owns: upstream's reasons and
// messages, and on PodReadyToStartContainers berth's PodWait after
// upstream's message (docs/why-waiting.md).
func TestWaitingReasons(t *testing.T) {
	T, F := corev1.ConditionTrue, corev1.ConditionFalse
	ready := readySandbox("10.244.0.5")
	exitedSandbox := runtimestate.Sandbox{ID: "0123456789abcdef", State: runtimestate.SandboxNotReady, CreatedAt: t0, IPs: []string{"10.244.0.5"}}
	initDone := exited("init", "i1", 0, "Completed", 0)
	const (
		unreadyApp    = "containers with unready status: [app]"
		incomplete    = "containers with incomplete status: [init]"
		sandboxFailed = "creating the pod sandbox failed: rpc error: failed to create containerd task: OCI runtime create failed"
		cniFailed     = `setting up the pod network failed: failed to setup network for sandbox "web": plugin type="bridge" failed (add): no IP addresses available`
		pvcNotBound   = `volume "data" is not ready: error processing PVC default/data: PVC is not bound`
		nsb           = ReasonPodSandboxNotReady
		noSandbox     = "no pod sandbox exists"
	)
	type want struct{ RTS, Ini, CRD, Rdy condView }
	notReady := func(t corev1.PodConditionType, reason, msg string) condView { return condView{t, F, reason, msg} }
	rts := func(s corev1.ConditionStatus, reason, msg string) condView {
		return condView{corev1.PodReadyToStartContainers, s, reason, msg}
	}
	ini := condView{corev1.PodInitialized, T, "", ""}
	crd := condView{corev1.ContainersReady, T, "", ""}
	rdy := condView{corev1.PodReady, T, "", ""}
	unready := want{
		CRD: notReady(corev1.ContainersReady, ReasonContainersNotReady, unreadyApp),
		Rdy: notReady(corev1.PodReady, ReasonContainersNotReady, unreadyApp),
	}
	with := func(w want, r, i condView) want { w.RTS, w.Ini = r, i; return w }
	initializing := notReady(corev1.PodInitialized, ReasonContainersNotInitialized, incomplete)

	tests := []struct {
		name      string
		pod       *corev1.Pod
		runtime   *runtimestate.Pod
		failures  map[string]runtimestate.StartFailure
		readiness map[string]bool
		wait      *PodWait
		want      want
	}{
		{name: "fresh pod", want: with(unready, rts(F, nsb, noSandbox), initializing)},
		{name: "sandbox failing",
			wait: &PodWait{Reason: "SandboxCreateFailed", Message: sandboxFailed, Failures: 3},
			want: with(unready, rts(F, nsb, noSandbox+"; SandboxCreateFailed: "+sandboxFailed+" (3 times in a row)"), initializing)},
		{name: "CNI failing",
			wait: &PodWait{Reason: "NetworkSetupFailed", Message: cniFailed, Failures: 1},
			want: with(unready, rts(F, nsb, noSandbox+"; NetworkSetupFailed: "+cniFailed), initializing)},
		{name: "volume waiting",
			wait: &PodWait{Reason: "VolumeNotReady", Message: pvcNotBound, Failures: 2},
			want: with(unready, rts(F, nsb, noSandbox+"; VolumeNotReady: "+pvcNotBound+" (2 times in a row)"), initializing)},
		{name: "sandbox exited, re-created", runtime: rt(sbs(exitedSandbox), initDone),
			want: with(unready, rts(F, nsb, "pod sandbox is not ready"), ini)},
		{name: "sandbox without an IP", runtime: rt(sbs(readySandbox())),
			want: with(unready, rts(F, nsb, "pod sandbox has no IP address"), initializing)},
		{name: "sandbox in the wrong network mode",
			pod:     func() *corev1.Pod { p := withInit(staticPod("app"), "init"); p.Spec.HostNetwork = true; return p }(),
			runtime: rt(sbs(ready)),
			want:    with(unready, rts(F, nsb, "network namespace mode changed and sandbox needs to be recreated"), initializing)},
		{name: "a wait is old news once the sandbox is ready", runtime: rt(sbs(ready), running("init", "i1", 0)),
			wait: &PodWait{Reason: "NetworkSetupFailed", Message: cniFailed, Failures: 4},
			want: with(unready, rts(T, "", ""), initializing)},
		{name: "init container running", runtime: rt(sbs(ready), running("init", "i1", 0)),
			want: with(unready, rts(T, "", ""), initializing)},
		{name: "image pulling", runtime: rt(sbs(ready), initDone),
			failures: map[string]runtimestate.StartFailure{"app": {Reason: "ErrImagePull", Message: "pull access denied"}},
			want:     with(unready, rts(T, "", ""), ini)},
		{name: "readiness probe failing", runtime: rt(sbs(ready), running("app", "c1", 0), initDone),
			readiness: map[string]bool{"app": false},
			want:      with(unready, rts(T, "", ""), ini)},
		{name: "readiness gate not ready",
			pod: func() *corev1.Pod {
				p := withInit(staticPod("app"), "init")
				p.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "example.com/lb"}}
				p.Status.Conditions = []corev1.PodCondition{{Type: "example.com/lb", Status: F}}
				return p
			}(),
			runtime: rt(sbs(ready), running("app", "c1", 0), initDone),
			want: want{RTS: rts(T, "", ""), Ini: ini, CRD: crd,
				Rdy: notReady(corev1.PodReady, ReasonReadinessGatesNotReady, `the status of pod readiness gate "example.com/lb" is not "True", but False`)}},
		{name: "all ready", runtime: rt(sbs(ready), running("app", "c1", 0), initDone),
			want: want{RTS: rts(T, "", ""), Ini: ini, CRD: crd, Rdy: rdy}},
		{name: "pod completed", pod: withPolicy(withInit(staticPod("app"), "init"), corev1.RestartPolicyNever),
			runtime: rt(sbs(exitedSandbox), exited("app", "c1", 0, "Completed", 0), initDone),
			want: want{RTS: rts(F, nsb, "pod sandbox is not ready"), Ini: condView{corev1.PodInitialized, T, ReasonPodCompleted, ""},
				CRD: notReady(corev1.ContainersReady, ReasonPodCompleted, ""), Rdy: notReady(corev1.PodReady, ReasonPodCompleted, "")}},
		{name: "pod failed", pod: withPolicy(withInit(staticPod("app"), "init"), corev1.RestartPolicyNever),
			runtime: rt(sbs(exitedSandbox), exited("app", "c1", 1, "Error", 0), initDone),
			wait:    &PodWait{Reason: "NetworkSetupFailed", Message: cniFailed, Failures: 1},
			want: want{RTS: rts(F, nsb, "pod sandbox is not ready; NetworkSetupFailed: "+cniFailed), Ini: ini,
				CRD: notReady(corev1.ContainersReady, ReasonPodFailed, ""), Rdy: notReady(corev1.PodReady, ReasonPodFailed, "")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := tc.pod
			if pod == nil {
				pod = withInit(staticPod("app"), "init")
			}
			got := Generate(Input{Pod: pod, Runtime: tc.runtime, Failures: tc.failures, Readiness: tc.readiness, Wait: tc.wait, Now: now})
			g := want{
				RTS: views([]corev1.PodCondition{cond(got.Conditions, corev1.PodReadyToStartContainers)})[0],
				Ini: views([]corev1.PodCondition{cond(got.Conditions, corev1.PodInitialized)})[0],
				CRD: views([]corev1.PodCondition{cond(got.Conditions, corev1.ContainersReady)})[0],
				Rdy: views([]corev1.PodCondition{cond(got.Conditions, corev1.PodReady)})[0],
			}
			if diff := cmp.Diff(tc.want, g); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOneLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"plain", "plain"},
		{"two\nlines\r\n\tand  tabs ", "two lines and tabs"},
		{strings.Repeat("a", MaxWaitMessage), strings.Repeat("a", MaxWaitMessage)},
		{strings.Repeat("a", MaxWaitMessage+1), strings.Repeat("a", MaxWaitMessage-3) + "..."},
		// A cut never splits a rune: "é" is two bytes.
		{"a" + strings.Repeat("é", MaxWaitMessage), "a" + strings.Repeat("é", (MaxWaitMessage-4)/2) + "..."},
	} {
		got := oneLine(tc.in)
		if got != tc.want {
			t.Errorf("oneLine(%.20q...) = %.40q..., want %.40q...", tc.in, got, tc.want)
		}
		if len(got) > MaxWaitMessage {
			t.Errorf("oneLine(%.20q...) is %d bytes", tc.in, len(got))
		}
	}
}
