package dra

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/stats"
	corev1 "k8s.io/api/core/v1"
	drahealthv1 "k8s.io/kubelet/pkg/apis/dra-health/v1"
	drahealthv1alpha1 "k8s.io/kubelet/pkg/apis/dra-health/v1alpha1"
	drapb "k8s.io/kubelet/pkg/apis/dra/v1"
	testclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

// healthSetup is a manager following health (both gates on) with a pod
// whose claim is prepared with a fake driver that serves the health
// services given.
type healthSetup struct {
	m   *Manager
	clk *testclock.FakeClock
	d   *fakeDriver
	pod *corev1.Pod
	dir string
}

func newHealthSetup(t *testing.T, healthServices ...string) *healthSetup {
	t.Helper()
	pod := claimPod("pod-a", "pod-a-gpu")
	dir := t.TempDir()
	m, _, clk := testManager(t, dir, allocatedClaim("pod-a-gpu", pod, pod))
	m.cfg.Health, m.cfg.HealthMessages = true, true
	m.drivers.watch = m.watchHealth
	d := startDriver(t, append([]string{drapb.DRAPluginService}, healthServices...)...)
	register(t, m, d, append([]string{drapb.DRAPluginService}, healthServices...)...)
	if err := m.Prepare(context.Background(), pod); err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	return &healthSetup{m: m, clk: clk, d: d, pod: pod, dir: dir}
}

// status is the claim entry of the pod's container "ctr".
func (s *healthSetup) status() []corev1.ResourceStatus {
	return s.m.ClaimHealth(s.pod, &s.pod.Spec.Containers[0])
}

// device is the entry of the pod's one device with the health given.
func device(h corev1.ResourceHealthStatus, msg string) []corev1.ResourceStatus {
	rh := corev1.ResourceHealth{ResourceID: "example.com/test=pod-a-gpu", Health: h}
	if msg != "" {
		rh.Message = ptr.To(msg)
	}
	return []corev1.ResourceStatus{{Name: "claim:gpu", Resources: []corev1.ResourceHealth{rh}}}
}

// waitUpdate waits for the pod's UID on Updates.
func (s *healthSetup) waitUpdate(t *testing.T, what string) {
	t.Helper()
	select {
	case uid := <-s.m.Updates():
		if uid != s.pod.UID {
			t.Fatalf("%s: update for %s, want %s", what, uid, s.pod.UID)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: no update for the pod", what)
	}
}

func (s *healthSetup) wantStatus(t *testing.T, what string, want []corev1.ResourceStatus) {
	t.Helper()
	if diff := cmp.Diff(want, s.status()); diff != "" {
		t.Errorf("%s: ClaimHealth (-want +got):\n%s", what, diff)
	}
}

// TestHealthStreamReports: the driver's reports reach the pod's status
// entry and each change sends the pod to Updates: Unknown before any
// report, Healthy, Unhealthy with its message, Healthy again; a report
// of a device no pod uses sends nothing; the health is checkpointed.
func TestHealthStreamReports(t *testing.T) {
	s := newHealthSetup(t, drahealthv1.DRAResourceHealthService)
	s.wantStatus(t, "before any report", device(corev1.ResourceHealthStatusUnknown, ""))
	waitFor(t, "the stream opened", func() bool { return len(s.d.health.Opens()) == 1 })

	s.d.health.send(report("dev-pod-a-gpu", drahealthv1.HealthStatus_HEALTHY, "", 0))
	s.waitUpdate(t, "healthy")
	s.wantStatus(t, "healthy", device(corev1.ResourceHealthStatusHealthy, ""))

	s.d.health.send(report("dev-pod-a-gpu", drahealthv1.HealthStatus_UNHEALTHY, "ECC errors", 0))
	s.waitUpdate(t, "unhealthy")
	s.wantStatus(t, "unhealthy", device(corev1.ResourceHealthStatusUnhealthy, "ECC errors"))
	b, err := os.ReadFile(filepath.Join(s.dir, HealthStateFileName))
	if err != nil || !strings.Contains(string(b), `"Health":"Unhealthy"`) || !strings.Contains(string(b), `"`+testNode+`/dev-pod-a-gpu"`) {
		t.Errorf("%s = %s, %v; want the unhealthy device", HealthStateFileName, b, err)
	}

	s.m.cfg.HealthMessages = false
	s.wantStatus(t, "without the message gate", device(corev1.ResourceHealthStatusUnhealthy, ""))
	s.m.cfg.HealthMessages = true

	// The same report again, then another device's: no update; the
	// device back to healthy: one.
	s.d.health.send(report("dev-pod-a-gpu", drahealthv1.HealthStatus_UNHEALTHY, "ECC errors", 0))
	s.d.health.send(report("dev-pod-a-gpu", drahealthv1.HealthStatus_UNHEALTHY, "ECC errors", 0), report("dev-unused", drahealthv1.HealthStatus_UNHEALTHY, "", 0))
	s.d.health.send(report("dev-pod-a-gpu", drahealthv1.HealthStatus_HEALTHY, "", 0), report("dev-unused", drahealthv1.HealthStatus_UNHEALTHY, "", 0))
	s.waitUpdate(t, "healthy again")
	s.wantStatus(t, "healthy again", device(corev1.ResourceHealthStatusHealthy, ""))
	select {
	case uid := <-s.m.Updates():
		t.Errorf("an extra update for %s: unchanged and unused devices send none", uid)
	default:
	}
}

// TestHealthGoesStale: a device's report holds for its timeout (the
// driver's, else DefaultHealthTimeout) and reads Unknown, without its
// message, once older.
func TestHealthGoesStale(t *testing.T) {
	s := newHealthSetup(t, drahealthv1.DRAResourceHealthService)
	waitFor(t, "the stream opened", func() bool { return len(s.d.health.Opens()) == 1 })
	s.d.health.send(report("dev-pod-a-gpu", drahealthv1.HealthStatus_UNHEALTHY, "hot", 0))
	s.waitUpdate(t, "unhealthy")
	s.clk.Step(DefaultHealthTimeout)
	s.wantStatus(t, "at the default timeout", device(corev1.ResourceHealthStatusUnhealthy, "hot"))
	s.clk.Step(time.Second)
	s.wantStatus(t, "past the default timeout", device(corev1.ResourceHealthStatusUnknown, ""))

	s.d.health.send(report("dev-pod-a-gpu", drahealthv1.HealthStatus_HEALTHY, "", 5))
	s.waitUpdate(t, "healthy with a 5 s timeout")
	s.wantStatus(t, "fresh", device(corev1.ResourceHealthStatusHealthy, ""))
	s.clk.Step(6 * time.Second)
	s.wantStatus(t, "past its own timeout", device(corev1.ResourceHealthStatusUnknown, ""))
}

// TestHealthStreamReconnects: a stream that breaks drops the driver's
// health (upstream's clearDriver as the stream exits) and is opened
// again healthRetry later, not before.
func TestHealthStreamReconnects(t *testing.T) {
	s := newHealthSetup(t, drahealthv1.DRAResourceHealthService)
	waitFor(t, "the stream opened", func() bool { return len(s.d.health.Opens()) == 1 })
	waitFor(t, "the driver connected", func() bool { return s.m.Drivers().connected(testDriver) })
	s.d.health.send(report("dev-pod-a-gpu", drahealthv1.HealthStatus_HEALTHY, "", 0))
	s.waitUpdate(t, "healthy")

	s.d.health.breakStream()
	waitFor(t, "the health dropped", func() bool {
		return cmp.Equal(s.status(), device(corev1.ResourceHealthStatusUnknown, ""))
	})
	waitFor(t, "the retry timer", s.clk.HasWaiters)
	s.clk.Step(healthRetry - time.Millisecond)
	time.Sleep(50 * time.Millisecond)
	if n := len(s.d.health.Opens()); n != 1 {
		t.Fatalf("%d streams opened before healthRetry, want 1", n)
	}
	s.clk.Step(time.Millisecond)
	waitFor(t, "the stream opened again", func() bool { return len(s.d.health.Opens()) == 2 })
	s.d.health.send(report("dev-pod-a-gpu", drahealthv1.HealthStatus_UNHEALTHY, "", 0))
	s.waitUpdate(t, "unhealthy on the new stream")
	s.wantStatus(t, "after the reconnect", device(corev1.ResourceHealthStatusUnhealthy, ""))
}

// TestHealthDeregistration: the driver deregistering ends its stream,
// which drops its devices' health, in memory and in the checkpoint.
func TestHealthDeregistration(t *testing.T) {
	s := newHealthSetup(t, drahealthv1.DRAResourceHealthService)
	waitFor(t, "the stream opened", func() bool { return len(s.d.health.Opens()) == 1 })
	s.d.health.send(report("dev-pod-a-gpu", drahealthv1.HealthStatus_UNHEALTHY, "", 0))
	s.waitUpdate(t, "unhealthy")
	s.m.Drivers().DeRegisterPlugin(context.Background(), testDriver, s.d.endpoint)
	waitFor(t, "the health dropped", func() bool {
		b, err := os.ReadFile(filepath.Join(s.dir, HealthStateFileName))
		return err == nil && string(b) == "{}"
	})
	s.wantStatus(t, "after deregistration", device(corev1.ResourceHealthStatusUnknown, ""))
}

// TestHealthServiceChoice: v1 when offered, v1alpha1 when that is all
// (through upstream's wrapper), no stream without either; a driver
// listing the service without serving it (Unimplemented) is not asked
// again.
func TestHealthServiceChoice(t *testing.T) {
	for _, tc := range []struct {
		offered []string
		want    string
	}{
		{[]string{drapb.DRAPluginService}, ""},
		{[]string{drapb.DRAPluginService, drahealthv1alpha1.DRAResourceHealthService}, drahealthv1alpha1.DRAResourceHealthService},
		{[]string{drahealthv1alpha1.DRAResourceHealthService, drahealthv1.DRAResourceHealthService}, drahealthv1.DRAResourceHealthService},
	} {
		if got := chooseHealthService(tc.offered); got != tc.want {
			t.Errorf("chooseHealthService(%q) = %q, want %q", tc.offered, got, tc.want)
		}
	}

	s := newHealthSetup(t, drahealthv1alpha1.DRAResourceHealthService)
	waitFor(t, "the v1alpha1 stream opened", func() bool { return len(s.d.health.Opens()) == 1 })
	if got := s.d.health.Opens()[0]; got != drahealthv1alpha1.DRAResourceHealthService {
		t.Errorf("stream opened over %q, want v1alpha1", got)
	}
	s.d.health.send(report("dev-pod-a-gpu", drahealthv1.HealthStatus_UNHEALTHY, "over v1alpha1", 0))
	s.waitUpdate(t, "unhealthy over v1alpha1")
	s.wantStatus(t, "over v1alpha1", device(corev1.ResourceHealthStatusUnhealthy, "over v1alpha1"))

	// Listed, not served: watchHealth returns at once, with no retry.
	d := startDriver(t, drapb.DRAPluginService)
	p, err := dialPlugin(testDriver, d.endpoint, drapb.DRAPluginService, drahealthv1.DRAResourceHealthService, callTimeout, func(p *plugin) stats.Handler { return &connWatch{d: s.m.drivers, p: p} })
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	done := make(chan struct{})
	go func() { s.m.watchHealth(context.Background(), p); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("watchHealth still runs against a driver without the health service")
	}
}

// TestHealthOffOpensNoStream: without the gate no stream is opened.
func TestHealthOffOpensNoStream(t *testing.T) {
	pod := claimPod("pod-a", "pod-a-gpu")
	m, _, _ := testManager(t, t.TempDir(), allocatedClaim("pod-a-gpu", pod, pod))
	d := startDriver(t, drapb.DRAPluginService, drahealthv1.DRAResourceHealthService)
	register(t, m, d, drapb.DRAPluginService, drahealthv1.DRAResourceHealthService)
	waitFor(t, "the driver connected", func() bool { return m.Drivers().connected(testDriver) })
	time.Sleep(50 * time.Millisecond)
	if opens := d.health.Opens(); len(opens) != 0 {
		t.Errorf("streams opened with the gate off: %q", opens)
	}
}
