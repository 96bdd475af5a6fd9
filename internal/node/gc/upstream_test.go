package gc

import (
	"testing"
	"time"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
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
		if up := src.Value(kubelet, tt.name).AsDuration(); up != tt.berth {
			t.Errorf("%s: upstream %v, berth %v", tt.name, up, tt.berth)
		}
	}
}
