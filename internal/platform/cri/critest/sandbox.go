package critest

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/berthk8s/berth/internal/platform/cri"
)

func (s *suite) testSandboxLifecycle(t *testing.T) {
	ctx := testContext(t)
	rt := s.Client.Runtime
	cfg := s.sandboxConfig(t, sandboxOpts{})
	id := s.runSandbox(t, ctx, cfg)

	st := s.sandboxStatus(t, ctx, id)
	if st.GetId() != id || st.GetState() != runtimeapi.PodSandboxState_SANDBOX_READY || st.GetCreatedAt() <= 0 {
		t.Errorf("new sandbox: id %q state %s createdAt %d, want %q READY and a creation time", st.GetId(), st.GetState(), st.GetCreatedAt(), id)
	}
	if diff := cmp.Diff(cfg.GetMetadata(), st.GetMetadata(), protocmp.Transform()); diff != "" {
		t.Errorf("metadata (-sent +reported):\n%s", diff)
	}
	if diff := cmp.Diff(cfg.GetLabels(), st.GetLabels()); diff != "" {
		t.Errorf("labels (-sent +reported):\n%s", diff)
	}
	if got := st.GetAnnotations()["berth.test/annotation"]; got != "sandbox" {
		t.Errorf("annotation = %q, want sandbox", got)
	}
	if got := st.GetLinux().GetNamespaces().GetOptions().GetNetwork(); got != runtimeapi.NamespaceMode_NODE {
		t.Errorf("network namespace mode = %s, want NODE", got)
	}
	if ip := st.GetNetwork().GetIp(); ip != "" {
		t.Errorf("host-network sandbox has IP %q, want none", ip)
	}
	// A truncated ID names the sandbox too.
	if got := s.sandboxStatus(t, ctx, id[:12]); got.GetId() != id {
		t.Errorf("PodSandboxStatus by prefix = %q, want %q", got.GetId(), id)
	}

	for range 2 { // stopping is idempotent
		if _, err := rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: id}); err != nil {
			t.Fatalf("StopPodSandbox: %v", err)
		}
		if got := s.sandboxStatus(t, ctx, id).GetState(); got != runtimeapi.PodSandboxState_SANDBOX_NOTREADY {
			t.Errorf("stopped sandbox state = %s, want NOTREADY", got)
		}
	}
	for range 2 { // so is removing
		if _, err := rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: id}); err != nil {
			t.Fatalf("RemovePodSandbox: %v", err)
		}
	}
	_, err := rt.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: id})
	if !errors.Is(err, cri.ErrNotFound) {
		t.Errorf("PodSandboxStatus of a removed sandbox: %v, want cri.ErrNotFound", err)
	}
}

func (s *suite) testSandboxListFilters(t *testing.T) {
	ctx := testContext(t)
	rt := s.Client.Runtime
	runCfg := s.sandboxConfig(t, sandboxOpts{labels: map[string]string{"berth.test/role": "keep"}})
	running := s.runSandbox(t, ctx, runCfg)
	stopCfg := s.sandboxConfig(t, sandboxOpts{labels: map[string]string{"berth.test/role": "stop"}})
	stopped := s.runSandbox(t, ctx, stopCfg)
	if _, err := rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: stopped}); err != nil {
		t.Fatalf("StopPodSandbox: %v", err)
	}
	state := func(st runtimeapi.PodSandboxState) *runtimeapi.PodSandboxStateValue {
		return &runtimeapi.PodSandboxStateValue{State: st}
	}
	mine := func(extra map[string]string) map[string]string {
		// Restrict every list to this test's sandboxes: a real runtime
		// may run others.
		sel := map[string]string{"berth.test/suite": "critest"}
		for k, v := range extra {
			sel[k] = v
		}
		return sel
	}
	tests := []struct {
		name   string
		filter *runtimeapi.PodSandboxFilter
		want   []string
	}{
		{"by id", &runtimeapi.PodSandboxFilter{Id: running}, []string{running}},
		{"by id prefix", &runtimeapi.PodSandboxFilter{Id: stopped[:12]}, []string{stopped}},
		{"by label", &runtimeapi.PodSandboxFilter{LabelSelector: mine(map[string]string{"berth.test/pod": runCfg.GetLabels()["berth.test/pod"]})}, []string{running}},
		{"ready by label", &runtimeapi.PodSandboxFilter{State: state(runtimeapi.PodSandboxState_SANDBOX_READY), LabelSelector: mine(map[string]string{"berth.test/role": "keep"})}, []string{running}},
		{"notready", &runtimeapi.PodSandboxFilter{State: state(runtimeapi.PodSandboxState_SANDBOX_NOTREADY), LabelSelector: mine(map[string]string{"berth.test/pod": stopCfg.GetLabels()["berth.test/pod"]})}, []string{stopped}},
		{"state excludes", &runtimeapi.PodSandboxFilter{State: state(runtimeapi.PodSandboxState_SANDBOX_READY), Id: stopped}, nil},
		{"label value mismatch", &runtimeapi.PodSandboxFilter{LabelSelector: mine(map[string]string{"berth.test/role": "none"})}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: tc.filter})
			if err != nil {
				t.Fatalf("ListPodSandbox: %v", err)
			}
			var got []string
			for _, sb := range resp.GetItems() {
				if sb.GetId() == running || sb.GetId() == stopped {
					got = append(got, sb.GetId())
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ListPodSandbox (-want +got):\n%s", diff)
			}
		})
	}
	// Unfiltered items carry what the kubelet reads.
	resp, err := rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: &runtimeapi.PodSandboxFilter{Id: running}})
	if err != nil || len(resp.GetItems()) != 1 {
		t.Fatalf("ListPodSandbox by id: %v, %d items", err, len(resp.GetItems()))
	}
	item := resp.GetItems()[0]
	if item.GetMetadata().GetUid() != runCfg.GetMetadata().GetUid() || item.GetCreatedAt() <= 0 || item.GetLabels()["berth.test/role"] != "keep" {
		t.Errorf("ListPodSandbox item = %v, want metadata, creation time and labels", item)
	}
}

// testPodNetwork checks that a pod-network sandbox gets an IP and loses it
// when stopped; it needs a ready network (CNI) and is skipped otherwise.
func (s *suite) testPodNetwork(t *testing.T) {
	ctx := testContext(t)
	info, err := s.Client.Status(ctx)
	if err != nil {
		t.Fatalf("Status: %v", err)
	}
	if !info.NetworkReady {
		t.Skipf("runtime network not ready (%s): no pod-network sandbox", info.NetworkMessage)
	}
	id := s.runSandbox(t, ctx, s.sandboxConfig(t, sandboxOpts{podNetwork: true}))
	if ip := s.sandboxStatus(t, ctx, id).GetNetwork().GetIp(); ip == "" {
		t.Error("pod-network sandbox has no IP")
	}
	if _, err := s.Client.Runtime.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: id}); err != nil {
		t.Fatalf("StopPodSandbox: %v", err)
	}
	if ip := s.sandboxStatus(t, ctx, id).GetNetwork().GetIp(); ip != "" {
		t.Errorf("stopped sandbox still has IP %q", ip)
	}
}
