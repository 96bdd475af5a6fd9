package agent

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	tracingapi "k8s.io/component-base/tracing/api/v1"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/platform/cri/crifake"
	"github.com/berthk8s/berth/internal/platform/tracing/tracingtest"
)

// TestTracingExportsSyncAndCRISpans runs a node with tracing set against
// an in-process OTLP collector: a static pod's syncPod span, with
// upstream's attributes, reaches it with the CRI calls it made
// (RunPodSandbox among them) as its children, flushed at the latest when
// berth stops.
func TestTracingExportsSyncAndCRISpans(t *testing.T) {
	collector, addr := tracingtest.Start(t)
	fake := crifake.New(clock.RealClock{})
	cfg, manifests, port := standalone(t, fake)
	cfg.Kubelet.Tracing = &tracingapi.TracingConfiguration{Endpoint: ptr.To(addr), SamplingRatePerMillion: ptr.To[int32](1000000)}

	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- runWith(ctx, cfg, "test", clock.RealClock{}, testProcess()) }()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		}
	}
	t.Cleanup(stop)
	if err := os.WriteFile(filepath.Join(manifests, "web.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	waitPod(t, port, "running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	stop()

	var syncPod, runSandbox bool
	for _, s := range collector.Spans() {
		if s.Service != "kubelet" || s.Host != "node-a" {
			t.Errorf("span %s from service %q host %q, want kubelet on node-a", s.Name, s.Service, s.Host)
		}
		switch s.Name {
		case "syncPod":
			if s.Attrs["k8s.pod.name"] == "web-node-a" && s.Attrs["k8s.namespace.name"] == "default" && s.Attrs["k8s.pod"] == "default/web-node-a" && s.Attrs["k8s.pod.update_type"] != "" {
				syncPod = true
			}
		case "runtime.v1.RuntimeService/RunPodSandbox":
			if s.Parent == "syncPod" {
				runSandbox = true
			}
		}
	}
	if !syncPod || !runSandbox {
		t.Errorf("collector got syncPod of web-node-a: %v, RunPodSandbox in a syncPod: %v; spans: %+v", syncPod, runSandbox, collector.Spans())
	}
}
