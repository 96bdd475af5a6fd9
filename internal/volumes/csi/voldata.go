package csi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// The keys of vol_data.json (upstream's volDataKey); upstream_test.go pins
// them. A publication's file has all but seLinuxMountContext, which berth
// does not write (it mounts no SELinux context: the runtime relabels a
// volume instead, volume.RelabeledVolumes); a staging directory's has
// driverName and volumeHandle.
const (
	keySpecVolID     = "specVolID"
	keyVolumeHandle  = "volumeHandle"
	keyDriverName    = "driverName"
	keyNodeName      = "nodeName"
	keyAttachmentID  = "attachmentID"
	keyLifecycleMode = "volumeLifecycleMode"
)

// volDataTempPrefix starts the name of a vol_data.json being written.
const volDataTempPrefix = "." + volDataFile + "-"

// maxVolData bounds the read of a vol_data.json: a few hundred bytes
// when berth or upstream wrote it.
const maxVolData = 64 << 10

// saveVolData writes data as dir's vol_data.json, a JSON object as
// upstream's saveVolumeData writes it (a json.Encoder's, keys sorted),
// through a temporary file renamed over it, so that a crash never leaves
// half a file that TearDown cannot read.
func saveVolData(dir string, data map[string]string) error {
	path := filepath.Join(dir, volDataFile)
	tmp, err := os.CreateTemp(dir, volDataTempPrefix+"*")
	if err != nil {
		return fmt.Errorf("save volume data file %q: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // after the rename, a no-op
	err = json.NewEncoder(tmp).Encode(data)
	if err == nil {
		err = tmp.Chmod(0o640)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("save volume data file %q: %w", path, err)
	}
	return nil
}

// loadVolData reads dir's vol_data.json (upstream's loadVolumeData),
// without following a symlink in its place and at most maxVolData bytes.
// A missing file is an error that is fs.ErrNotExist.
func loadVolData(dir string) (map[string]string, error) {
	path := filepath.Join(dir, volDataFile)
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, fmt.Errorf("open volume data file %q: %w", path, err)
	}
	defer f.Close()
	data := map[string]string{}
	if err := json.NewDecoder(io.LimitReader(f, maxVolData)).Decode(&data); err != nil {
		return nil, fmt.Errorf("parse volume data file %q: %w", path, err)
	}
	return data, nil
}

// hasVolData reports whether dir has a vol_data.json.
func hasVolData(dir string) (bool, error) {
	_, err := os.Lstat(filepath.Join(dir, volDataFile))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("look for volume data file in %q: %w", dir, err)
	}
	return true, nil
}

// removeDir removes the directory dir if it is there: never recursively
// (a non-empty dir is an error and stays), never when it is a mount
// point.
func (m *Mounter) removeDir(dir string) error {
	mounted, err := m.mounted(dir)
	if err != nil {
		return err
	}
	if mounted {
		return fmt.Errorf("remove %q: it is still a mount point", dir)
	}
	if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %q: %w", dir, err)
	}
	return nil
}

// removeVolData removes the vol_data.json of the volume directory dir,
// then dir itself when it is empty (upstream's removeMountDir, after the
// mount directory in it is gone).
func removeVolData(dir string) error {
	if err := os.Remove(filepath.Join(dir, volDataFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove volume data file in %q: %w", dir, err)
	}
	// Whatever a crash in saveVolData left.
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("list %q: %w", dir, err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), volDataTempPrefix) {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("remove %q: %w", filepath.Join(dir, e.Name()), err)
			}
		}
	}
	if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %q: %w", dir, err)
	}
	return nil
}

// removeMountDir removes a mount directory (a target or a staging
// directory) unless it is mounted or not empty, then its vol_data.json and
// its parent (upstream's removeMountDir).
func (m *Mounter) removeMountDir(dir string) error {
	if err := m.removeDir(dir); err != nil {
		return err
	}
	return removeVolData(filepath.Dir(dir))
}

// mounted reports whether path is a mount point; a missing path is not.
func (m *Mounter) mounted(path string) (bool, error) {
	mnt, err := m.isMountPoint(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("check whether %q is a mount point: %w", path, err)
	}
	return mnt, nil
}
