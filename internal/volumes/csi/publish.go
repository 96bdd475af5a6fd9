package csi

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// Upstream's messages (MountDevice, SetUpAt); upstream_test.go pins them.
const (
	msgStageSecret   = "fetching NodeStageSecretRef %s/%s failed: %w"
	msgPublishSecret = "fetching NodePublishSecretRef %s/%s failed: %w"
)

// dirMode is the mode of the directories berth makes for a volume, as
// upstream's.
const dirMode = 0o750

// publication is one SetUp's volume and what was learnt about it.
type publication struct {
	pod     *corev1.Pod
	v       Volume
	handle  string
	staging string // the staging directory; "" when not staged
	// publishContext is the VolumeAttachment's attachment metadata.
	publishContext map[string]string
	policy         driverPolicy
	caps           NodeCapabilities
}

// stage stages a persistent volume at p.staging (upstream's MountDevice):
// the stage secret read, the staging directory made and its vol_data.json
// written beside it, NodeStageVolume called. When NodeStageVolume fails
// for certain and the volume was not staged before, the directory and
// the file go again.
func (m *Mounter) stage(ctx context.Context, client *NodeClient, p publication) error {
	v := p.v
	secrets, err := m.stageSecrets(ctx, v)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(p.staging, dirMode); err != nil {
		return fmt.Errorf("make staging directory: %w", err)
	}
	dataDir := filepath.Dir(p.staging)
	staged, err := hasVolData(dataDir)
	if err != nil {
		return err
	}
	if err := saveVolData(dataDir, map[string]string{keyDriverName: v.Driver, keyVolumeHandle: p.handle}); err != nil {
		return err
	}
	req := &csipb.NodeStageVolumeRequest{
		VolumeId:          p.handle,
		PublishContext:    p.publishContext,
		StagingTargetPath: p.staging,
		VolumeCapability:  mountCapability(v.FSType, v.MountOptions, accessMode(v.AccessModes, p.caps.SingleNodeMultiWriter), mountGroup(p.caps, p.pod)),
		Secrets:           secrets,
		VolumeContext:     v.Attributes,
	}
	err = client.NodeStageVolume(ctx, req)
	if err == nil {
		return nil
	}
	err = driverError("NodeStageVolume", p.staging, err)
	if !IsUncertain(err) && !staged {
		if rerr := m.removeMountDir(p.staging); rerr != nil {
			klog.FromContext(ctx).Error(rerr, "Failed to clean up the staging directory after NodeStageVolume failed", "stagingPath", p.staging)
		}
	}
	return err
}

// publish publishes the volume at its target (upstream's SetUpAt): the
// publish secret read, the volume context made (the attributes, the pod's
// information with podInfoOnMount, the service account's tokens with
// tokenRequests), the target's parent made (after the reads, unlike
// upstream, so that a failed read leaves no directory), its
// vol_data.json written, NodePublishVolume called. When NodePublishVolume
// fails for certain and the volume was not published before (not a
// republish), the target, the file and the parent go again.
func (m *Mounter) publish(ctx context.Context, client *NodeClient, p publication) error {
	v := p.v
	secrets, err := m.publishSecrets(ctx, p.pod, v)
	if err != nil {
		return err
	}
	mode := lifecycleMode(v.Inline)
	volumeContext := v.Attributes
	if p.policy.PodInfoOnMount {
		volumeContext = merged(volumeContext, podInfo(p.pod, mode))
	}
	if len(p.policy.TokenRequests) > 0 {
		tokens, err := m.tokens(ctx, p.pod, p.policy.TokenRequests)
		if err != nil {
			return err
		}
		if p.policy.TokensInSecrets {
			secrets = merged(secrets, tokens)
		} else {
			volumeContext = merged(volumeContext, tokens)
		}
	}
	target := TargetDir(m.cfg.PodsDir, p.pod.UID, v.SpecName)
	dataDir := filepath.Dir(target)
	if err := os.MkdirAll(dataDir, dirMode); err != nil {
		return fmt.Errorf("make the target's parent directory: %w", err)
	}
	published, err := hasVolData(dataDir)
	if err != nil {
		return err
	}
	err = saveVolData(dataDir, map[string]string{
		keySpecVolID:     v.SpecName,
		keyVolumeHandle:  p.handle,
		keyDriverName:    v.Driver,
		keyNodeName:      m.cfg.NodeName,
		keyLifecycleMode: string(mode),
		keyAttachmentID:  attachmentName(p.handle, v.Driver, m.cfg.NodeName),
	})
	if err == nil {
		req := &csipb.NodePublishVolumeRequest{
			VolumeId:          p.handle,
			PublishContext:    p.publishContext,
			StagingTargetPath: p.staging,
			TargetPath:        target,
			VolumeCapability:  mountCapability(v.FSType, v.MountOptions, accessMode(v.AccessModes, p.caps.SingleNodeMultiWriter), mountGroup(p.caps, p.pod)),
			Readonly:          v.ReadOnly,
			Secrets:           secrets,
			VolumeContext:     volumeContext,
		}
		if err = client.NodePublishVolume(ctx, req); err != nil {
			err = driverError("NodePublishVolume", target, err)
		}
	}
	if err != nil && !IsUncertain(err) && !published {
		if rerr := m.removeMountDir(target); rerr != nil {
			klog.FromContext(ctx).Error(rerr, "Failed to clean up the target after NodePublishVolume failed", "target", target)
		}
	}
	return err
}

// stageSecrets reads the secret NodeStageVolume is given (nil: none).
func (m *Mounter) stageSecrets(ctx context.Context, v Volume) (map[string]string, error) {
	ref := v.StageSecret
	if ref == nil {
		return nil, nil
	}
	s, err := m.secret(ctx, *ref)
	if err != nil {
		return nil, fmt.Errorf(msgStageSecret, ref.Namespace, ref.Name, err)
	}
	return s, nil
}

// publishSecrets reads the secret NodePublishVolume is given (empty:
// none); an inline volume's is read in the pod's namespace.
func (m *Mounter) publishSecrets(ctx context.Context, pod *corev1.Pod, v Volume) (map[string]string, error) {
	if v.PublishSecret == nil {
		return map[string]string{}, nil
	}
	ref := *v.PublishSecret
	if v.Inline {
		ref.Namespace = pod.Namespace
	}
	s, err := m.secret(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf(msgPublishSecret, ref.Namespace, ref.Name, err)
	}
	return s, nil
}
