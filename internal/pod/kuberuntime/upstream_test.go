package kuberuntime

import (
	"testing"
	"time"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

// TestReasonsMatchUpstream pins the event and waiting reasons berth
// records to the upstream constants they stand for.
func TestReasonsMatchUpstream(t *testing.T) {
	const (
		events    = "k8s.io/kubernetes/pkg/kubelet/events"
		container = "k8s.io/kubernetes/pkg/kubelet/container"
		images    = "k8s.io/kubernetes/pkg/kubelet/images"
		runtime   = "k8s.io/kubernetes/pkg/kubelet/kuberuntime"
	)
	tests := []struct {
		berth, pkg, name string
	}{
		{eventPulling, events, "PullingImage"},
		{eventPulled, events, "PulledImage"},
		{eventFailed, events, "FailedToPullImage"},
		{eventFailed, events, "FailedToCreateContainer"},
		{eventFailed, events, "FailedToStartContainer"},
		{eventInspectFailed, events, "FailedToInspectImage"},
		{eventBackOff, events, "BackOffPullImage"},
		{eventBackOff, events, "BackOffStartContainer"},
		{eventErrImageNeverPull, events, "ErrImageNeverPullPolicy"},
		{eventCreated, events, "CreatedContainer"},
		{eventStarted, events, "StartedContainer"},
		{eventKilling, events, "KillingContainer"},
		{eventSandboxChanged, events, "SandboxChanged"},
		{eventFailedCreatePodSandBox, events, "FailedCreatePodSandBox"},
		{eventFailedCreatePodContainer, events, "FailedToCreatePodContainer"},
		{eventFailedKillPod, events, "FailedToKillPod"},
		{eventFailedPostStartHook, events, "FailedPostStartHook"},
		{eventFailedPreStopHook, events, "FailedPreStopHook"},
		{ReasonRunContainerError, container, "ErrRunContainer"},
		{ReasonErrImagePull, images, "ErrImagePull"},
		{ReasonImagePullBackOff, images, "ErrImagePullBackOff"},
		{ReasonErrImageNeverPull, images, "ErrImageNeverPull"},
		{ReasonInvalidImageName, images, "ErrInvalidImageName"},
		{ReasonImageInspectError, images, "ErrImageInspect"},
		{ReasonCreateContainerConfigError, runtime, "ErrCreateContainerConfig"},
		{ReasonCreateContainerError, runtime, "ErrCreateContainer"},
		{ReasonPostStartHookError, runtime, "ErrPostStartHook"},
	}
	src := upstreamsrc.New(t)
	for _, tt := range tests {
		if up := src.Value(tt.pkg, tt.name).AsString(); up != tt.berth {
			t.Errorf("berth %q, upstream %s.%s %q", tt.berth, tt.pkg, tt.name, up)
		}
	}
}

// TestNumbersMatchUpstream pins the numbers berth copies from upstream:
// the hook response body limit and the image pull back-off. (The resource
// numbers are containerconfig's.)
func TestNumbersMatchUpstream(t *testing.T) {
	const lifecycle = "k8s.io/kubernetes/pkg/kubelet/lifecycle"
	tests := []struct {
		berth     int64
		pkg, name string
	}{
		{maxHookRespBody, lifecycle, "maxRespBodyLength"},
	}
	src := upstreamsrc.New(t)
	for _, tt := range tests {
		if up := src.Value(tt.pkg, tt.name).AsInt(); up != tt.berth {
			t.Errorf("berth %d, upstream %s.%s %d", tt.berth, tt.pkg, tt.name, up)
		}
	}
	const kubelet = "k8s.io/kubernetes/pkg/kubelet"
	for _, tt := range []struct {
		berth time.Duration
		name  string
	}{
		{pullBackoffInitial, "imageBackOffPeriod"},
		{pullBackoffMax, "MaxImageBackOff"},
	} {
		if up := src.Value(kubelet, tt.name).AsDuration(); up != tt.berth {
			t.Errorf("berth %v, upstream %s.%s %v", tt.berth, kubelet, tt.name, up)
		}
	}
}
