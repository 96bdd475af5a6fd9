package cm

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
)

const testUID = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"

func TestNameForms(t *testing.T) {
	for _, tt := range []struct {
		name              Name
		cgroupfs, systemd string
	}{
		{Name{}, "/", "/"},
		{Name{"kubepods"}, "/kubepods", "/kubepods.slice"},
		{Name{"kubepods", "burstable"}, "/kubepods/burstable", "/kubepods.slice/kubepods-burstable.slice"},
		{Name{"kubepods", "besteffort", "pod" + testUID}, "/kubepods/besteffort/pod" + testUID,
			"/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod0f1e2d3c_4b5a_6978_8796_a5b4c3d2e1f0.slice"},
		{Name{"kubepods", "pod" + testUID}, "/kubepods/pod" + testUID,
			"/kubepods.slice/kubepods-pod0f1e2d3c_4b5a_6978_8796_a5b4c3d2e1f0.slice"},
		{Name{"berth-e2e", "kubepods"}, "/berth-e2e/kubepods", "/berth_e2e.slice/berth_e2e-kubepods.slice"},
	} {
		if got := tt.name.Cgroupfs(); got != tt.cgroupfs {
			t.Errorf("%q.Cgroupfs() = %q, want %q", []string(tt.name), got, tt.cgroupfs)
		}
		got, err := tt.name.Systemd()
		if err != nil || got != tt.systemd {
			t.Errorf("%q.Systemd() = %q, %v; want %q", []string(tt.name), got, err, tt.systemd)
		}
		if diff := cmp.Diff(tt.name, ParseCgroupfs(tt.cgroupfs)); diff != "" {
			t.Errorf("ParseCgroupfs(%q) (-want +got):\n%s", tt.cgroupfs, diff)
		}
	}
}

func TestParseSystemd(t *testing.T) {
	for in, want := range map[string]Name{
		"/system.slice":           {"system"},
		"system.slice":            {"system"},
		"/kube_reserved.slice":    {"kube-reserved"},
		"/a.slice/a-b.slice":      {"a", "b"},
		"/":                       {},
		"/kubepods.slice/x.scope": {"x.scope"},
	} {
		if diff := cmp.Diff(want, ParseSystemd(in)); diff != "" {
			t.Errorf("ParseSystemd(%q) (-want +got):\n%s", in, diff)
		}
	}
}

func TestSystemdRejectsBadNames(t *testing.T) {
	if got, err := (Name{"a/b"}).Systemd(); err == nil {
		t.Errorf("Systemd() = %q, want an error for a slash", got)
	}
}

func TestPodUIDFromComponent(t *testing.T) {
	for _, tt := range []struct {
		in      string
		systemd bool
		want    types.UID
		ok      bool
	}{
		{"pod" + testUID, false, testUID, true},
		{"burstable", false, "", false},
		{"pod", false, "", false},
		{"kubepods-burstable-pod0f1e2d3c_4b5a_6978_8796_a5b4c3d2e1f0.slice", true, testUID, true},
		{"kubepods-pod0f1e2d3c_4b5a_6978_8796_a5b4c3d2e1f0.slice", true, testUID, true},
		{"kubepods-burstable.slice", true, "", false},
		{"pod" + testUID, true, "", false},
	} {
		got, ok := podUIDFromComponent(tt.in, tt.systemd)
		if got != tt.want || ok != tt.ok {
			t.Errorf("podUIDFromComponent(%q, %v) = %q, %v; want %q, %v", tt.in, tt.systemd, got, ok, tt.want, tt.ok)
		}
	}
}

func TestPickDriver(t *testing.T) {
	for _, tc := range []struct {
		configured, fromRuntime, want string
		overridden                    bool
	}{
		{DriverCgroupfs, "", DriverCgroupfs, false},
		{DriverCgroupfs, DriverCgroupfs, DriverCgroupfs, false},
		{DriverCgroupfs, DriverSystemd, DriverSystemd, true},
		{DriverSystemd, DriverCgroupfs, DriverCgroupfs, true},
	} {
		if got, over := PickDriver(tc.configured, tc.fromRuntime); got != tc.want || over != tc.overridden {
			t.Errorf("PickDriver(%q, %q) = %q, %v; want %q, %v", tc.configured, tc.fromRuntime, got, over, tc.want, tc.overridden)
		}
	}
}
