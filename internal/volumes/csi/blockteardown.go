package csi

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

// UnmapPodBlocks ends every block volume publication of pod podUID that
// MapBlock began, as far as it went (see BlockVolumes): UnmapBlock of
// each. It works from the disk alone, after a restart too.
func (m *Mounter) UnmapPodBlocks(ctx context.Context, podUID types.UID) error {
	names, err := m.BlockVolumes(podUID)
	if err != nil {
		return err
	}
	var errs []error
	for _, name := range names {
		errs = append(errs, m.UnmapBlock(ctx, podUID, name))
	}
	return errors.Join(errs...)
}

// BlockVolumes returns the names of the block volumes of which pod podUID
// has anything on the node: its link, its publish path or its global map
// path's entry.
func (m *Mounter) BlockVolumes(podUID types.UID) ([]string, error) {
	if err := checkPathElement("pod UID", string(podUID)); err != nil {
		return nil, err
	}
	root := filepath.Join(m.cfg.PluginsDir, pluginName, volumeDevicesDir)
	found := map[string]bool{}
	// The links, then the publications and the global map entries.
	links, err := os.ReadDir(filepath.Dir(DeviceLink(m.cfg.PodsDir, podUID, "x")))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("list the pod's volume devices: %w", err)
	}
	for _, l := range links {
		found[l.Name()] = true
	}
	publications, err := os.ReadDir(filepath.Join(root, blockPublishDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("list the block volumes' publications: %w", err)
	}
	for _, p := range publications {
		if _, err := os.Lstat(filepath.Join(root, blockPublishDir, p.Name(), string(podUID))); err == nil {
			found[p.Name()] = true
		}
	}
	volumes, err := os.ReadDir(root)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("list the block volumes: %w", err)
	}
	for _, v := range volumes {
		name := v.Name()
		if name == blockStagingDir || name == blockPublishDir {
			continue
		}
		if _, err := os.Lstat(filepath.Join(root, name, blockMapDir, string(podUID))); err == nil {
			found[name] = true // escaped as upstream; a PV's name has no "/"
		}
	}
	out := make([]string, 0, len(found))
	for name := range found {
		out = append(out, name)
	}
	return out, nil
}

// UnmapBlock ends pod podUID's publication of block volume specName, as
// upstream's UnmapBlockVolume, UnmapPodDevice and TearDownDevice: the
// loop device of the global map path's entry detached, the pod's link
// removed; the global map path's entry unmounted and removed;
// NodeUnpublishVolume at the publish path, which goes if the driver left
// it; when no other pod has the volume published, NodeUnstageVolume (with
// STAGE_UNSTAGE_VOLUME and a staging directory) and the volume's
// directories removed. The driver and the handle come from the volume's
// vol_data.json; without one nothing was published (MapBlock writes it
// first): what is left is removed, and a publish path left is an error.
// Anything still mounted stays, and is an error.
func (m *Mounter) UnmapBlock(ctx context.Context, podUID types.UID, specName string) error {
	if err := errors.Join(checkPathElement("pod UID", string(podUID)), checkPathElement("volume name", specName)); err != nil {
		return fmt.Errorf("unmap CSI block volume %q: %w", specName, err)
	}
	paths := newBlockPaths(m.cfg.PluginsDir, m.cfg.PodsDir, podUID, specName)
	if err := m.unmapBlock(ctx, paths); err != nil {
		return fmt.Errorf("unmap CSI block volume %q of pod %s: %w", specName, podUID, err)
	}
	return nil
}

func (m *Mounter) unmapBlock(ctx context.Context, paths blockPaths) error {
	data, err := loadVolData(paths.data)
	if errors.Is(err, fs.ErrNotExist) {
		return m.unmapWithoutData(paths)
	}
	if err != nil {
		return err
	}
	driver, handle := data[keyDriverName], data[keyVolumeHandle]
	if driver == "" || handle == "" {
		return fmt.Errorf("%s names no driver or no volume handle", volDataFile)
	}
	log := klog.FromContext(ctx).WithValues("driver", driver, "volumeHandle", handle, "publishPath", paths.publish)
	ctx = klog.NewContext(ctx, log)
	client, release, err := m.dialLocked(ctx, driver, handle)
	if err != nil {
		return err
	}
	defer release()
	if err := m.unmapDevice(paths); err != nil {
		return err
	}
	if err := client.NodeUnpublishVolume(ctx, &csipb.NodeUnpublishVolumeRequest{VolumeId: handle, TargetPath: paths.publish}); err != nil {
		return fmt.Errorf("NodeUnpublishVolume at %q: %w", paths.publish, err)
	}
	if err := m.removeDir(paths.publish); err != nil {
		return err
	}
	log.V(4).Info("Unpublished CSI block volume")
	others, err := entries(paths.publishDir)
	if err != nil || len(others) > 0 {
		return err
	}
	return m.unstageBlock(ctx, client, paths, handle)
}

// unmapDevice detaches the loop device of the global map path's entry,
// removes the pod's link, and unmounts and removes the entry (upstream's
// UnmapBlockVolume).
func (m *Mounter) unmapDevice(paths blockPaths) error {
	mapped, err := m.mounted(paths.podMap)
	if err != nil {
		return err
	}
	if mapped {
		if err := m.block.DetachLoop(paths.podMap); err != nil {
			return err
		}
	}
	if err := removeLink(paths.link); err != nil {
		return err
	}
	if mapped {
		if err := m.block.Unmount(paths.podMap); err != nil {
			return fmt.Errorf("unmount the global map path %q: %w", paths.podMap, err)
		}
	}
	if err := os.Remove(paths.podMap); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove the global map path %q: %w", paths.podMap, err)
	}
	return nil
}

// unstageBlock is upstream's TearDownDevice after the last pod's
// publication: NodeUnstageVolume when the staging directory is there and
// the driver stages, then the directories go (cleanupOrphanDeviceFiles).
func (m *Mounter) unstageBlock(ctx context.Context, client *NodeClient, paths blockPaths, handle string) error {
	if _, err := os.Lstat(paths.staging); err == nil {
		caps, err := client.NodeGetCapabilities(ctx)
		if err != nil {
			return fmt.Errorf("get node capabilities of the CSI driver: %w", err)
		}
		if caps.StageUnstageVolume {
			req := &csipb.NodeUnstageVolumeRequest{VolumeId: handle, StagingTargetPath: paths.staging}
			if err := client.NodeUnstageVolume(ctx, req); err != nil {
				return fmt.Errorf("NodeUnstageVolume at %q: %w", paths.staging, err)
			}
			klog.FromContext(ctx).V(4).Info("Unstaged CSI block volume", "stagingPath", paths.staging)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("look for the staging path: %w", err)
	}
	return m.removeBlockDirs(paths)
}

// unmapWithoutData cleans up after a MapBlock that did not get as far as
// the vol_data.json: nothing was staged or published, so nothing calls
// the driver; a publish path there is an error (who published it?).
func (m *Mounter) unmapWithoutData(paths blockPaths) error {
	if err := m.unmapDevice(paths); err != nil {
		return err
	}
	if _, err := os.Lstat(paths.publish); err == nil {
		return fmt.Errorf("%q is published but the volume has no %s: the driver to unpublish it is unknown", paths.publish, volDataFile)
	}
	others, err := entries(paths.publishDir)
	if err != nil || len(others) > 0 {
		return err
	}
	return m.removeBlockDirs(paths)
}

// removeBlockDirs removes a block volume's directories once no pod has
// it: the publish directory, the staging directory, the global map path,
// the vol_data.json, the data and the volume's directory. None is removed
// recursively or while mounted.
func (m *Mounter) removeBlockDirs(paths blockPaths) error {
	for _, dir := range []string{paths.publishDir, paths.staging, paths.globalMap} {
		if err := m.removeDir(dir); err != nil {
			return err
		}
	}
	if err := removeVolData(paths.data); err != nil {
		return err
	}
	if err := os.Remove(paths.volumeDir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %q: %w", paths.volumeDir, err)
	}
	return nil
}

// entries lists dir (nothing when it is missing).
func entries(dir string) ([]os.DirEntry, error) {
	out, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %q: %w", dir, err)
	}
	return out, nil
}

// blockData calls visit with the vol_data.json of every block volume on
// the node (<plugins>/kubernetes.io/csi/volumeDevices/<pv>/data). A file
// that cannot be read is an error: the volume might be in use.
func (m *Mounter) blockData(visit func(data map[string]string)) error {
	root := filepath.Join(m.cfg.PluginsDir, pluginName, volumeDevicesDir)
	volumes, err := entries(root)
	if err != nil {
		return err
	}
	for _, v := range volumes {
		if !v.IsDir() || v.Name() == blockStagingDir || v.Name() == blockPublishDir {
			continue
		}
		data, err := loadVolData(filepath.Join(root, v.Name(), blockDataDir))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		visit(data)
	}
	return nil
}
