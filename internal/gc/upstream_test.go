package gc

import (
	"go/ast"
	"go/types"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/berthk8s/berth/internal/upstreamsrc"
)

// TestMatchesUpstream pins the event reasons, the image GC reasons and the
// periods to upstream's constants.
func TestMatchesUpstream(t *testing.T) {
	const (
		events  = "k8s.io/kubernetes/pkg/kubelet/events"
		images  = "k8s.io/kubernetes/pkg/kubelet/images"
		kubelet = "k8s.io/kubernetes/pkg/kubelet"
	)
	src := upstreamsrc.New(t)
	for _, tt := range []struct{ berth, pkg, name string }{
		{eventContainerGCFailed, events, "ContainerGCFailed"},
		{eventImageGCFailed, events, "ImageGCFailed"},
		{eventFreeDiskSpaceFailed, events, "FreeDiskSpaceFailed"},
		{eventInvalidDiskCapacity, events, "InvalidDiskCapacity"},
		{ReasonAge, images, "ImageGarbageCollectedTotalReasonAge"},
		{ReasonSpace, images, "ImageGarbageCollectedTotalReasonSpace"},
	} {
		if up := src.Value(tt.pkg, tt.name).AsString(); up != tt.berth {
			t.Errorf("%s.%s = %q, berth has %q", tt.pkg, tt.name, up, tt.berth)
		}
	}
	for _, tt := range []struct {
		berth time.Duration
		name  string
	}{
		{ContainerGCPeriod, "ContainerGCPeriod"},
		{ImageGCPeriod, "ImageGCPeriod"},
	} {
		expr := types.ExprString(src.Value(kubelet, tt.name).Node.(ast.Expr))
		if up := durationExpr(t, expr); up != tt.berth {
			t.Errorf("%s: upstream %v (%s), berth %v", tt.name, up, expr, tt.berth)
		}
	}
}

// durationExpr evaluates "time.Minute" or "5 * time.Minute" (upstream's
// spelling of the periods) without resolving the standard library.
func durationExpr(t *testing.T, expr string) time.Duration {
	t.Helper()
	n, unit := int64(1), expr
	if a, b, ok := strings.Cut(expr, " * "); ok {
		v, err := strconv.ParseInt(a, 10, 64)
		if err != nil {
			t.Fatalf("upstream period %q: %v", expr, err)
		}
		n, unit = v, b
	}
	units := map[string]time.Duration{"time.Second": time.Second, "time.Minute": time.Minute, "time.Hour": time.Hour}
	u, ok := units[unit]
	if !ok {
		t.Fatalf("upstream period %q: unknown unit", expr)
	}
	return time.Duration(n) * u
}
