package dra

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clienttesting "k8s.io/client-go/testing"
	drapb "k8s.io/kubelet/pkg/apis/dra/v1"
	drapbv1beta1 "k8s.io/kubelet/pkg/apis/dra/v1beta1"
)

func TestChooseService(t *testing.T) {
	v1, beta := drapb.DRAPluginService, drapbv1beta1.DRAPluginService
	for name, tc := range map[string]struct {
		offered []string
		want    string
		err     string
	}{
		"v1":                 {offered: []string{v1}, want: v1},
		"v1beta1":            {offered: []string{beta}, want: beta},
		"both, newest first": {offered: []string{v1, beta}, want: v1},
		"both, oldest first": {offered: []string{beta, v1}, want: v1},
		"with a health one":  {offered: []string{"v1.DRAResourceHealth", beta}, want: beta},
		"none":               {offered: nil, err: "empty list of supported gRPC services"},
		"unknown":            {offered: []string{"v1alpha4.Node"}, err: "none of services supported by the plugin"},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := chooseService(tc.offered)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("chooseService = %q, %v; want error %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("chooseService = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// TestRegistrationPicksTheService: a driver's calls go over the service
// chosen at registration, v1beta1 through the conversion wrapper.
func TestRegistrationPicksTheService(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		serves   []string
		versions []string
		want     string
	}{
		{"v1 and v1beta1", []string{drapb.DRAPluginService, drapbv1beta1.DRAPluginService}, []string{drapbv1beta1.DRAPluginService, drapb.DRAPluginService}, drapb.DRAPluginService},
		{"v1beta1 only", []string{drapbv1beta1.DRAPluginService}, []string{drapbv1beta1.DRAPluginService}, drapbv1beta1.DRAPluginService},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := claimPod("pod-a", "pod-a-gpu")
			m, _, _ := testManager(t, t.TempDir(), allocatedClaim("pod-a-gpu", pod, pod))
			d := startDriver(t, tc.serves...)
			if err := m.Drivers().ValidatePlugin(ctx, testDriver, d.endpoint, tc.versions); err != nil {
				t.Fatalf("ValidatePlugin: %v", err)
			}
			register(t, m, d, tc.versions...)
			if err := m.Prepare(ctx, pod); err != nil {
				t.Fatalf("Prepare: %v", err)
			}
			if err := m.Unprepare(ctx, pod.UID); err != nil {
				t.Fatalf("Unprepare: %v", err)
			}
			calls := d.Calls()
			if len(calls) != 2 || calls[0].Service != tc.want || calls[1].Service != tc.want {
				t.Errorf("calls %+v, want a prepare and an unprepare over %s", calls, tc.want)
			}
			if ids, err := m.CDIDevices(pod, &pod.Spec.Containers[0]); err == nil {
				t.Errorf("CDIDevices after Unprepare = %q, want the claim unknown", ids)
			}
		})
	}
}

func TestRegistrationRefusalsAndDeregistration(t *testing.T) {
	ctx := context.Background()
	m, _, _ := testManager(t, t.TempDir())
	d := startDriver(t, drapb.DRAPluginService)
	err := m.Drivers().ValidatePlugin(ctx, testDriver, d.endpoint, []string{"v1alpha3.Node"})
	if err == nil || !strings.HasPrefix(err.Error(), "invalid supported gRPC versions of DRA driver plugin "+testDriver+" at endpoint "+d.endpoint+": ") {
		t.Errorf("ValidatePlugin(unknown version) = %v", err)
	}
	if err := m.Drivers().RegisterPlugin(ctx, testDriver, d.endpoint, nil, nil); err == nil {
		t.Error("RegisterPlugin without versions succeeded")
	}
	register(t, m, d, drapb.DRAPluginService)
	if err := m.Drivers().RegisterPlugin(ctx, testDriver, d.endpoint, []string{drapb.DRAPluginService}, nil); err == nil ||
		!strings.Contains(err.Error(), "already registered") {
		t.Errorf("RegisterPlugin of the same endpoint again = %v", err)
	}
	second := startDriver(t, drapb.DRAPluginService)
	timeout := time.Second
	if err := m.Drivers().RegisterPlugin(ctx, testDriver, second.endpoint, []string{drapb.DRAPluginService}, &timeout); err != nil {
		t.Fatal(err)
	}
	// Once both are up, the newest is used.
	waitFor(t, "the newest endpoint used", func() bool {
		p, _ := m.Drivers().plugin(testDriver)
		return p.endpoint == second.endpoint
	})
	if p, _ := m.Drivers().plugin(testDriver); p.timeout != time.Second {
		t.Errorf("the newest endpoint's timeout %v, want its registration's 1s", p.timeout)
	}
	m.Drivers().DeRegisterPlugin(ctx, testDriver, second.endpoint)
	if p, _ := m.Drivers().plugin(testDriver); p.endpoint != d.endpoint || p.timeout != callTimeout {
		t.Errorf("after the newest went, calls go to %s (%v), want %s (%v)", p.endpoint, p.timeout, d.endpoint, callTimeout)
	}
	m.Drivers().DeRegisterPlugin(ctx, testDriver, d.endpoint)
	if _, err := m.Drivers().plugin(testDriver); err == nil {
		t.Error("a driver without endpoints is still usable")
	}
	m.Drivers().DeRegisterPlugin(ctx, testDriver, d.endpoint) // twice: nothing
}

// deletes returns the field selectors of the ResourceSlice collection
// deletes the client saw.
func deletes(actions []clienttesting.Action) []string {
	var out []string
	for _, a := range actions {
		if dc, ok := a.(clienttesting.DeleteCollectionAction); ok && a.GetResource().Resource == "resourceslices" {
			out = append(out, dc.GetListRestrictions().Fields.String())
		}
	}
	return out
}

// TestDriverAwayHasItsSlicesWiped: at start the node's slices of every
// driver are wiped; a driver that goes has its own wiped WipeDelay later,
// unless it returns first.
func TestDriverAwayHasItsSlicesWiped(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	m, client, clk := testManager(t, t.TempDir())
	done := make(chan error)
	go func() { done <- m.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	waitFor(t, "the startup wipe", func() bool { return len(deletes(client.Actions())) == 1 })
	if got := deletes(client.Actions()); got[0] != "spec.nodeName="+testNode {
		t.Errorf("startup wipe selector %q", got[0])
	}

	d := startDriver(t, drapb.DRAPluginService)
	register(t, m, d, drapb.DRAPluginService)
	waitFor(t, "the connection", func() bool { return m.Drivers().connected(testDriver) })
	m.Drivers().DeRegisterPlugin(ctx, testDriver, d.endpoint)
	waitFor(t, "the away timer", func() bool { return clk.HasWaiters() })
	clk.Step(WipeDelay - time.Second)
	register(t, m, d, drapb.DRAPluginService) // back in time
	waitFor(t, "the connection again", func() bool { return m.Drivers().connected(testDriver) })
	clk.Step(time.Hour)
	time.Sleep(50 * time.Millisecond) // a wrongly fired timer would have wiped by now
	if got := deletes(client.Actions()); len(got) != 1 {
		t.Fatalf("wipes after the driver came back: %q, want only the startup one", got)
	}

	m.Drivers().DeRegisterPlugin(ctx, testDriver, d.endpoint)
	waitFor(t, "the away timer", func() bool { return clk.HasWaiters() })
	clk.Step(WipeDelay)
	waitFor(t, "the driver's wipe", func() bool { return len(deletes(client.Actions())) == 2 })
	if got := deletes(client.Actions())[1]; got != "spec.driver="+testDriver+",spec.nodeName="+testNode {
		t.Errorf("driver wipe selector %q", got)
	}
}

// TestDriverWhoseConnectionDropsIsAway: a driver that dies without
// removing its socket (still registered) is away once its connection is
// down, and comes back when a new one serves the socket.
func TestDriverWhoseConnectionDropsIsAway(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	m, client, clk := testManager(t, t.TempDir())
	done := make(chan error)
	go func() { done <- m.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	waitFor(t, "the startup wipe", func() bool { return len(deletes(client.Actions())) == 1 })
	d := startDriver(t, drapb.DRAPluginService)
	register(t, m, d, drapb.DRAPluginService)
	waitFor(t, "the connection", func() bool { return m.Drivers().connected(testDriver) })
	if clk.HasWaiters() {
		t.Fatal("an away timer runs for a connected driver")
	}
	d.server.Stop()
	waitFor(t, "the connection down", func() bool { return !m.Drivers().connected(testDriver) })
	waitFor(t, "the away timer", func() bool { return clk.HasWaiters() })
	clk.Step(WipeDelay)
	waitFor(t, "the driver's wipe", func() bool { return len(deletes(client.Actions())) == 2 })
	if _, err := m.Drivers().plugin(testDriver); err != nil {
		t.Errorf("the driver is no longer registered: %v (only its socket's removal deregisters it)", err)
	}
}

func TestWipeWaitsForTheNode(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	m, client, clk := testManager(t, t.TempDir())
	if err := client.CoreV1().Nodes().Delete(ctx, testNode, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { m.wipe(ctx, ""); close(done) }()
	waitFor(t, "the retry", func() bool { return clk.HasWaiters() })
	if got := deletes(client.Actions()); len(got) != 0 {
		t.Errorf("wiped before the Node exists: %q", got)
	}
	cancel()
	<-done
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
