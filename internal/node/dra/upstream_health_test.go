package dra

import (
	"go/ast"
	"reflect"
	"slices"
	"testing"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

// TestHealthTablesMatchUpstream pins the health services and their
// order, the default timeout, the per-driver cap, the retry period of a
// stream (upstream's wait.UntilWithContext in add), the file name, the
// values of a device's health and the checkpoint's fields.
func TestHealthTablesMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	if up := src.Value(upPlugin, "healthServicesSupportedByKubelet").AsStrings(); !slices.Equal(up, healthServices) {
		t.Errorf("health services %q, upstream %q", healthServices, up)
	}
	if up := src.Value(upDRA, "DefaultHealthTimeout").AsDuration(); up != DefaultHealthTimeout {
		t.Errorf("default health timeout %v, upstream %v", DefaultHealthTimeout, up)
	}
	if up := src.Value(upDRA, "maxDevicesPerDriver").AsInt(); up != maxDevicesPerDriver {
		t.Errorf("devices per driver %d, upstream %d", maxDevicesPerDriver, up)
	}
	calls := src.Func(upPlugin, "add").Calls("wait", "UntilWithContext")
	if len(calls) != 1 {
		t.Fatalf("upstream's add calls wait.UntilWithContext %d times, want once", len(calls))
	}
	if up := calls[0].Arg(2).AsDuration(); up != healthRetry {
		t.Errorf("health stream retry %v, upstream %v", healthRetry, up)
	}
	if !slices.Contains(src.Func(upDRA, "NewManager").StringLiterals(), HealthStateFileName) {
		t.Errorf("upstream's NewManager names no %q", HealthStateFileName)
	}
	for name, ours := range map[string]DeviceHealthStatus{
		"DeviceHealthStatusHealthy": DeviceHealthy, "DeviceHealthStatusUnhealthy": DeviceUnhealthy, "DeviceHealthStatusUnknown": DeviceUnknown,
	} {
		if up := src.Value(upState, name).AsString(); up != string(ours) {
			t.Errorf("%s %q, upstream %q", name, ours, up)
		}
	}
	for typ, ours := range map[string]reflect.Type{"DeviceHealth": reflect.TypeFor[DeviceHealth](), "DriverHealthState": reflect.TypeFor[driverHealth]()} {
		var ourFields []string
		for f := range ours.Fields() {
			ourFields = append(ourFields, f.Name)
		}
		if up := structFields(t, src, upState, typ); !slices.Equal(up, ourFields) {
			t.Errorf("%s fields %q, upstream's %q", typ, ourFields, up)
		}
	}
}

// structFields are the field names of the upstream struct type, in order.
func structFields(t *testing.T, src *upstreamsrc.Source, pkg, name string) []string {
	t.Helper()
	var out []string
	for _, f := range src.Files(pkg) {
		ast.Inspect(f.Node, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok || ts.Name.Name != name {
				return true
			}
			for _, fl := range ts.Type.(*ast.StructType).Fields.List {
				for _, id := range fl.Names {
					out = append(out, id.Name)
				}
			}
			return false
		})
	}
	if out == nil {
		t.Fatalf("upstream's %s has no struct %s", pkg, name)
	}
	return out
}
