package dra

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestClaimHealthEntries: the entries of a pod with two claims (one of
// two drivers and two requests, one without CDI IDs) for each container
// (an init container's too: ClaimHealth answers for any container it is
// asked about; the pod path asks for regular ones only), as upstream's
// UpdateAllocatedResourcesStatus builds them.
func TestClaimHealthEntries(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: testNS, UID: "uid-p"},
		Spec: corev1.PodSpec{
			ResourceClaims: []corev1.PodResourceClaim{
				{Name: "gpus", ResourceClaimTemplateName: ptr.To("t")},
				{Name: "nic", ResourceClaimName: ptr.To("shared-nic")},
				{Name: "later", ResourceClaimTemplateName: ptr.To("t")},
			},
		},
		Status: corev1.PodStatus{ResourceClaimStatuses: []corev1.PodResourceClaimStatus{
			{Name: "gpus", ResourceClaimName: ptr.To("p-gpus")},
		}},
	}
	m, _, _ := testManager(t, t.TempDir())
	m.cfg.HealthMessages = true
	m.claims[claimKey(testNS, "p-gpus")] = &claimEntry{ClaimState: ClaimState{ClaimName: "p-gpus", Namespace: testNS, DriverState: map[string]DriverState{
		"b.example.com": {Devices: []Device{
			{PoolName: "pool", DeviceName: "gpu-0", RequestNames: []string{"big"}, CDIDeviceIDs: []string{"b.example.com/gpu=0", "extra"}},
			{PoolName: "pool", DeviceName: "gpu-0-again", RequestNames: []string{"big"}, CDIDeviceIDs: []string{"b.example.com/gpu=0"}},
			{PoolName: "pool", DeviceName: "gpu-1", RequestNames: []string{"small"}, CDIDeviceIDs: []string{"b.example.com/gpu=1"}},
		}},
		"a.example.com": {Devices: []Device{{PoolName: "pool", DeviceName: "any"}}},
	}}}
	m.claims[claimKey(testNS, "shared-nic")] = &claimEntry{ClaimState: ClaimState{ClaimName: "shared-nic", Namespace: testNS, DriverState: map[string]DriverState{
		"n.example.com": {Devices: []Device{{PoolName: "nics", DeviceName: "eth1", RequestNames: []string{"nic"}, CDIDeviceIDs: []string{"n.example.com/nic=eth1"}}}},
	}}}
	if _, _, err := m.health.update("b.example.com", []DeviceHealth{
		{PoolName: "pool", DeviceName: "gpu-0", Health: DeviceUnhealthy, Message: "ECC"},
		{PoolName: "pool", DeviceName: "gpu-1", Health: DeviceHealthy},
	}, now); err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.health.update("n.example.com", []DeviceHealth{{PoolName: "nics", DeviceName: "eth1", Health: DeviceHealthy, HealthCheckTimeout: time.Second}}, now.Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}

	unhealthy0 := corev1.ResourceHealth{ResourceID: "b.example.com/gpu=0", Health: corev1.ResourceHealthStatusUnhealthy, Message: ptr.To("ECC")}
	healthy1 := corev1.ResourceHealth{ResourceID: "b.example.com/gpu=1", Health: corev1.ResourceHealthStatusHealthy}
	anyUnknown := corev1.ResourceHealth{ResourceID: "a.example.com/pool/any", Health: corev1.ResourceHealthStatusUnknown}
	nicStale := corev1.ResourceHealth{ResourceID: "n.example.com/nic=eth1", Health: corev1.ResourceHealthStatusUnknown}
	for _, tc := range []struct {
		name   string
		claims []corev1.ResourceClaim
		want   []corev1.ResourceStatus
	}{
		{"no claims", nil, nil},
		{"a whole claim: drivers in name order, each ID once, no-CDI fallback",
			[]corev1.ResourceClaim{{Name: "gpus"}},
			[]corev1.ResourceStatus{{Name: "claim:gpus", Resources: []corev1.ResourceHealth{anyUnknown, unhealthy0, healthy1}}}},
		{"a request: its devices and those of no request",
			[]corev1.ResourceClaim{{Name: "gpus", Request: "small"}},
			[]corev1.ResourceStatus{{Name: "claim:gpus/small", Resources: []corev1.ResourceHealth{anyUnknown, healthy1}}}},
		{"a subrequest counts as its request",
			[]corev1.ResourceClaim{{Name: "gpus", Request: "big/fast"}},
			[]corev1.ResourceStatus{{Name: "claim:gpus/big/fast", Resources: []corev1.ResourceHealth{anyUnknown, unhealthy0}}}},
		{"two claims, the second's report stale; the claim name resolved from the spec",
			[]corev1.ResourceClaim{{Name: "gpus", Request: "big"}, {Name: "nic"}},
			[]corev1.ResourceStatus{
				{Name: "claim:gpus/big", Resources: []corev1.ResourceHealth{anyUnknown, unhealthy0}},
				{Name: "claim:nic", Resources: []corev1.ResourceHealth{nicStale}},
			}},
		{"a request without devices: an empty entry (dropped by the generator)",
			[]corev1.ResourceClaim{{Name: "nic", Request: "other"}},
			[]corev1.ResourceStatus{{Name: "claim:nic/other", Resources: []corev1.ResourceHealth{}}}},
		{"a claim not generated yet, an unknown one: none",
			[]corev1.ResourceClaim{{Name: "later"}, {Name: "missing"}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &corev1.Container{Name: "c", Resources: corev1.ResourceRequirements{Claims: tc.claims}}
			if diff := cmp.Diff(tc.want, m.ClaimHealth(pod, c)); diff != "" {
				t.Errorf("ClaimHealth (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHealthCacheUpdate: upstream's updateHealthInfo over a table of
// reports: what is changed, what a report leaves out (kept until its
// timeout, then dropped, Unknown counted as a change unless it was
// Unknown), and the cap on new devices.
func TestHealthCacheUpdate(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	dev := func(name string, h DeviceHealthStatus, msg string, timeout time.Duration) DeviceHealth {
		return DeviceHealth{PoolName: "pool", DeviceName: name, Health: h, Message: msg, HealthCheckTimeout: timeout}
	}
	names := func(ds []DeviceHealth) []string {
		var out []string
		for _, d := range ds {
			out = append(out, d.DeviceName+"="+string(d.Health))
		}
		return out
	}
	type step struct {
		at      time.Duration
		report  []DeviceHealth
		changed []string
		kept    []string
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"new devices are changes; the same report is none", []step{
			{0, []DeviceHealth{dev("a", DeviceHealthy, "", DefaultHealthTimeout), dev("b", DeviceUnknown, "", DefaultHealthTimeout)}, []string{"a=Healthy", "b=Unknown"}, []string{"a", "b"}},
			{time.Second, []DeviceHealth{dev("a", DeviceHealthy, "", DefaultHealthTimeout), dev("b", DeviceUnknown, "", DefaultHealthTimeout)}, nil, []string{"a", "b"}},
		}},
		{"health, message and timeout changes", []step{
			{0, []DeviceHealth{dev("a", DeviceHealthy, "", DefaultHealthTimeout)}, []string{"a=Healthy"}, []string{"a"}},
			{1, []DeviceHealth{dev("a", DeviceUnhealthy, "", DefaultHealthTimeout)}, []string{"a=Unhealthy"}, []string{"a"}},
			{2, []DeviceHealth{dev("a", DeviceUnhealthy, "hot", DefaultHealthTimeout)}, []string{"a=Unhealthy"}, []string{"a"}},
			{3, []DeviceHealth{dev("a", DeviceUnhealthy, "hot", time.Minute)}, []string{"a=Unhealthy"}, []string{"a"}},
		}},
		{"a device left out: kept within its timeout, then Unknown and dropped", []step{
			{0, []DeviceHealth{dev("a", DeviceUnhealthy, "x", 10*time.Second), dev("b", DeviceUnknown, "", 10*time.Second)}, []string{"a=Unhealthy", "b=Unknown"}, []string{"a", "b"}},
			{10 * time.Second, nil, nil, []string{"a", "b"}},
			{11 * time.Second, nil, []string{"a=Unknown"}, nil},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := newHealthCache(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range tc.steps {
				changed, _, err := c.update("d", s.report, t0.Add(s.at))
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(s.changed, names(changed)); diff != "" {
					t.Errorf("step %d changed (-want +got):\n%s", i, diff)
				}
				var kept []string
				for _, d := range c.drivers["d"].Devices {
					kept = append(kept, d.DeviceName)
				}
				if diff := cmp.Diff(s.kept, kept, cmpSorted); diff != "" {
					t.Errorf("step %d kept (-want +got):\n%s", i, diff)
				}
			}
		})
	}

	t.Run("cap", func(t *testing.T) {
		c, _ := newHealthCache(t.TempDir())
		c.drivers["d"] = driverHealth{Devices: map[string]DeviceHealth{}}
		for i := range maxDevicesPerDriver {
			d := dev(fmt.Sprint(i), DeviceHealthy, "", 0)
			c.drivers["d"].Devices[deviceKey(d.PoolName, d.DeviceName)] = d
		}
		known := dev("0", DeviceUnhealthy, "", 0)
		_, ignored, err := c.update("d", []DeviceHealth{dev("new", DeviceHealthy, "", 0), known}, t0)
		if err != nil || ignored != 1 {
			t.Errorf("update past the cap: ignored %d, %v; want the new device ignored", ignored, err)
		}
		if got := c.get("d", "pool", known.DeviceName, t0).Health; got != DeviceUnhealthy {
			t.Errorf("a known device past the cap reads %s, want its update", got)
		}
	})
}

var cmpSorted = cmp.Options{cmpopts.SortSlices(func(a, b string) bool { return a < b }), cmpopts.EquateEmpty()}

// TestHealthCheckpointRoundTrip: the cache's file reads back as it was
// (upstream's JSON of state.DevicesHealthMap); an unreadable one leaves
// the cache empty with an error.
func TestHealthCheckpointRoundTrip(t *testing.T) {
	dir := t.TempDir()
	c, _ := newHealthCache(dir)
	t0 := time.Unix(1_700_000_000, 0).UTC()
	if _, _, err := c.update("d", []DeviceHealth{{PoolName: "p", DeviceName: "x", Health: DeviceUnhealthy, Message: "m", HealthCheckTimeout: time.Minute}}, t0); err != nil {
		t.Fatal(err)
	}
	back, err := newHealthCache(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(c.drivers, back.drivers); diff != "" {
		t.Errorf("read back (-wrote +read):\n%s", diff)
	}
	if err := os.WriteFile(filepath.Join(dir, HealthStateFileName), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	bad, err := newHealthCache(dir)
	if err == nil || len(bad.drivers) != 0 {
		t.Errorf("a corrupt checkpoint: %v, %d drivers; want an error and none", err, len(bad.drivers))
	}
}
