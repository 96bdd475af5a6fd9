package agent

import (
	"context"
	"fmt"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/berthk8s/berth/internal/images/pullrecords"
	"github.com/berthk8s/berth/internal/pod/kuberuntime"
)

// newPullRecords opens the image pull records under the root directory
// when KubeletEnsureSecretPulledImages is on (its default), with the
// configured verification policy, and turns the intents of pulls that
// ended while berth was down into records from the runtime's image list.
// It returns nil with the gate off.
func (n *node) newPullRecords(ctx context.Context) (*pullrecords.Manager, error) {
	kc := &n.cfg.Kubelet
	if !n.cfg.EnsureSecretPulledImages() {
		return nil, nil
	}
	policy, err := pullrecords.NewPolicy(kc.ImagePullCredentialsVerificationPolicy, kc.PreloadedImagesVerificationAllowlist)
	if err != nil {
		return nil, fmt.Errorf("check kubelet configuration: %w", err)
	}
	store, err := pullrecords.OpenStore(n.cfg.RootDir)
	if err != nil {
		return nil, err
	}
	images, err := n.conn.client.Image.ListImages(ctx, &runtimeapi.ListImagesRequest{})
	if err != nil {
		return nil, fmt.Errorf("list images for the image pull records: %w", err)
	}
	m, err := n.metrics.NewPullRecords()
	if err != nil {
		return nil, err
	}
	return pullrecords.New(ctx, pullrecords.Config{Store: store, Policy: policy, Clock: n.clock,
		Images: images.GetImages(), Checked: m.Checked, Counts: m.Counts})
}

// pullRecordsFor returns the records as the runtime manager takes them:
// nil (no records kept) for none, never a typed nil.
func pullRecordsFor(m *pullrecords.Manager) kuberuntime.PullRecords {
	if m == nil {
		return nil
	}
	return m
}
