package csi

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/klog/v2"
	utilstrings "k8s.io/utils/strings"
)

// TearDown ends the publication at target, a TargetDir, as upstream's
// TearDownAt then UnmountDevice: from the vol_data.json beside target it
// learns the driver and the handle; NodeUnpublishVolume; target removed
// if the driver left it (never when it is a mount point or not empty:
// that is an error and everything stays). When that was the last
// publication of a staged volume (no other vol_data.json under PodsDir
// names its driver and handle), NodeUnstageVolume, and the staging
// directory and its vol_data.json go. Then the target's vol_data.json and
// its parent go: kept until the volume is unstaged, so that a failed
// unstage is tried again by the next TearDown of target.
//
// Without a vol_data.json nothing is published: target and its parent
// are removed when empty, and TearDown returns nil (an error when one of
// them stays). The driver not registered is an error: the pod's directory
// must stay until the driver is back.
func (m *Mounter) TearDown(ctx context.Context, target string) error {
	target = filepath.Clean(target)
	if err := m.checkTarget(target); err != nil {
		return fmt.Errorf("tear down CSI volume at %q: %w", target, err)
	}
	dataDir := filepath.Dir(target)
	data, err := loadVolData(dataDir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := m.removeDir(target); err != nil {
			return fmt.Errorf("tear down CSI volume at %q without %s: %w", target, volDataFile, err)
		}
		if err := removeVolData(dataDir); err != nil {
			return fmt.Errorf("tear down CSI volume at %q without %s: %w", target, volDataFile, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("tear down CSI volume at %q: %w", target, err)
	}
	driver, handle := data[keyDriverName], data[keyVolumeHandle]
	if driver == "" || handle == "" {
		return fmt.Errorf("tear down CSI volume at %q: %s names no driver or no volume handle", target, volDataFile)
	}
	log := klog.FromContext(ctx).WithValues("target", target, "driver", driver, "volumeHandle", handle)
	ctx = klog.NewContext(ctx, log)
	persistent := data[keyLifecycleMode] != string(storagev1.VolumeLifecycleEphemeral)
	if err := m.tearDown(ctx, target, driver, handle, persistent); err != nil {
		return fmt.Errorf("tear down CSI volume at %q: %w", target, err)
	}
	log.V(4).Info("Unpublished CSI volume")
	return nil
}

// checkTarget refuses a path that is not a TargetDir under PodsDir.
func (m *Mounter) checkTarget(target string) error {
	rel, err := filepath.Rel(m.cfg.PodsDir, target)
	parts := strings.Split(filepath.ToSlash(rel), "/")
	if err != nil || len(parts) != 5 || parts[0] == ".." || parts[1] != "volumes" ||
		parts[2] != utilstrings.EscapeQualifiedName(pluginName) || parts[4] != mountDir {
		return fmt.Errorf("not a CSI volume's target under %q", m.cfg.PodsDir)
	}
	return nil
}

// dialLocked dials driver and takes the lock of its volume handle, for a
// teardown; release lets go of both.
func (m *Mounter) dialLocked(ctx context.Context, driver, handle string) (client *NodeClient, release func(), err error) {
	client, err = m.cfg.Drivers.Dial(driver)
	if err != nil {
		return nil, nil, err
	}
	unlock, err := m.locks.lock(ctx, uniqueName(driver, handle))
	if err != nil {
		client.Close()
		return nil, nil, err
	}
	return client, func() { unlock(); client.Close() }, nil
}

func (m *Mounter) tearDown(ctx context.Context, target, driver, handle string, persistent bool) error {
	client, release, err := m.dialLocked(ctx, driver, handle)
	if err != nil {
		return err
	}
	defer release()
	if err := client.NodeUnpublishVolume(ctx, &csipb.NodeUnpublishVolumeRequest{VolumeId: handle, TargetPath: target}); err != nil {
		return fmt.Errorf("NodeUnpublishVolume at %q: %w", target, err)
	}
	if err := m.removeDir(target); err != nil {
		return err
	}
	if persistent {
		if err := m.unstageIfLast(ctx, client, target, driver, handle); err != nil {
			return err
		}
	}
	return removeVolData(filepath.Dir(target))
}

// unstageIfLast unstages a staged volume (one whose staging directory has
// a vol_data.json) unless another target under PodsDir still has it
// published, then removes the staging directory, its vol_data.json and
// its parent (upstream's UnmountDevice; a driver without
// STAGE_UNSTAGE_VOLUME is not called, the directories go).
func (m *Mounter) unstageIfLast(ctx context.Context, client *NodeClient, target, driver, handle string) error {
	staging := stagingDir(m.cfg.PluginsDir, driver, handle)
	staged, err := hasVolData(filepath.Dir(staging))
	if err != nil || !staged {
		return err
	}
	inUse, err := m.publishedElsewhere(target, driver, handle)
	if err != nil {
		return fmt.Errorf("find the other publications of the volume, so it stays staged: %w", err)
	}
	if inUse != "" {
		klog.FromContext(ctx).V(4).Info("CSI volume stays staged: published elsewhere", "otherTarget", inUse)
		return nil
	}
	caps, err := client.NodeGetCapabilities(ctx)
	if err != nil {
		return fmt.Errorf("get node capabilities of CSI driver %q: %w", driver, err)
	}
	if caps.StageUnstageVolume {
		req := &csipb.NodeUnstageVolumeRequest{VolumeId: handle, StagingTargetPath: staging}
		if err := client.NodeUnstageVolume(ctx, req); err != nil {
			return fmt.Errorf("NodeUnstageVolume at %q: %w", staging, err)
		}
	}
	if err := m.removeMountDir(staging); err != nil {
		return fmt.Errorf("clean up the staging directory: %w", err)
	}
	return nil
}

// publishedElsewhere returns the first target other than target whose
// vol_data.json names driver and handle ("" when there is none). A file
// that cannot be read is an error: the volume might be in use.
func (m *Mounter) publishedElsewhere(target, driver, handle string) (string, error) {
	own := filepath.Clean(filepath.Dir(target))
	found := ""
	err := m.publications(func(dir string, data map[string]string) bool {
		if dir != own && data[keyDriverName] == driver && data[keyVolumeHandle] == handle {
			found = filepath.Join(dir, mountDir)
			return false
		}
		return true
	})
	return found, err
}

// publications calls visit with the directory and vol_data.json of every
// publication on the node (PodsDir/*/volumes/kubernetes.io~csi/*), until
// visit returns false. A file that cannot be read is an error.
func (m *Mounter) publications(visit func(dir string, data map[string]string) bool) error {
	pods, err := os.ReadDir(m.cfg.PodsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // no pod directory yet: no publication
	}
	if err != nil {
		return fmt.Errorf("list pods: %w", err)
	}
	plugin := utilstrings.EscapeQualifiedName(pluginName)
	for _, pod := range pods {
		if !pod.IsDir() {
			continue
		}
		volumesDir := filepath.Join(m.cfg.PodsDir, pod.Name(), "volumes", plugin)
		vols, err := os.ReadDir(volumesDir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("list CSI volumes: %w", err)
		}
		for _, vol := range vols {
			dir := filepath.Join(volumesDir, vol.Name())
			if !vol.IsDir() {
				continue
			}
			data, err := loadVolData(dir)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return err
			}
			if !visit(dir, data) {
				return nil
			}
		}
	}
	return nil
}
