package volume

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/types"
)

// readyDirPlugin is the plugin directory below PodsDir/<uid>/plugins that
// holds the ready markers. Upstream's emptyDir keeps its marker there, and
// its configMap, secret, downwardAPI and projected plugins wrap an emptyDir
// of the volume's name, so every kind berth sets up shares the place.
const readyDirPlugin = "kubernetes.io~empty-dir"

// readyMarker is the file whose presence records, across restarts of
// berth, that a volume's directory was set up and its fsGroup ownership
// applied, as upstream's emptyDir "ready" file:
// PodsDir/<uid>/plugins/kubernetes.io~empty-dir/<volume>/ready. It lives
// outside the volume, where no container can write.
func readyMarker(podsDir string, uid types.UID, volume string) string {
	return filepath.Join(readyMarkers(podsDir, uid), volume, "ready")
}

// readyMarkers is the directory of the ready markers of a pod's volumes.
func readyMarkers(podsDir string, uid types.UID) string {
	return filepath.Join(podsDir, string(uid), "plugins", readyDirPlugin)
}

// checkReady reports whether the volume was set up before: its marker is a
// regular file and the directory was not just created (or its tmpfs just
// mounted; after a reboot the directory is empty again). A marker that
// fresh makes stale is removed.
func checkReady(marker string, fresh bool) (bool, error) {
	if fresh {
		if err := os.Remove(marker); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return false, fmt.Errorf("remove stale ready marker %q: %w", marker, err)
		}
		return false, nil
	}
	info, err := os.Lstat(marker)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("stat ready marker %q: %w", marker, err)
	}
	return info.Mode().IsRegular(), nil
}

// setReady creates the volume's ready marker.
func setReady(marker string) error {
	if err := os.MkdirAll(filepath.Dir(marker), 0o750); err != nil {
		return fmt.Errorf("create ready marker directory: %w", err)
	}
	if err := os.WriteFile(marker, nil, 0o600); err != nil {
		return fmt.Errorf("create ready marker %q: %w", marker, err)
	}
	return nil
}
