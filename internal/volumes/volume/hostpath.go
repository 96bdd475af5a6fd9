package volume

import (
	"errors"
	"fmt"
	"io/fs"

	corev1 "k8s.io/api/core/v1"
)

// hostPathAction is what SetUp must do to a hostPath before using it.
type hostPathAction int

const (
	hostPathUse        hostPathAction = iota // use the path as it is
	hostPathCreateDir                        // DirectoryOrCreate on a missing path: mkdir -p, 0755
	hostPathCreateFile                       // FileOrCreate on a missing path: create an empty file, 0644
)

// statFunc is os.Stat (follows symlinks, as upstream's checks do).
type statFunc func(path string) (fs.FileInfo, error)

// checkHostPath decides what a hostPath of the given type needs, with
// upstream's error messages. stat is injected so the decision is testable.
func checkHostPath(path string, t corev1.HostPathType, stat statFunc) (hostPathAction, error) {
	if t == corev1.HostPathUnset {
		return hostPathUse, nil
	}
	info, err := stat(path)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return hostPathUse, fmt.Errorf("hostPath type check failed: stat %s: %w", path, err)
	}
	mode := fs.FileMode(0)
	if exists {
		mode = info.Mode()
	}
	switch t {
	case corev1.HostPathDirectoryOrCreate:
		if !exists {
			return hostPathCreateDir, nil
		}
		fallthrough
	case corev1.HostPathDirectory:
		if !exists || !mode.IsDir() {
			return hostPathUse, fmt.Errorf("hostPath type check failed: %s is not a directory", path)
		}
	case corev1.HostPathFileOrCreate:
		if !exists {
			return hostPathCreateFile, nil
		}
		fallthrough
	case corev1.HostPathFile:
		if !exists || !mode.IsRegular() {
			return hostPathUse, fmt.Errorf("hostPath type check failed: %s is not a file", path)
		}
	case corev1.HostPathSocket:
		if !exists || mode&fs.ModeSocket == 0 {
			return hostPathUse, fmt.Errorf("hostPath type check failed: %s is not a socket file", path)
		}
	case corev1.HostPathCharDev:
		if !exists || mode&fs.ModeCharDevice == 0 {
			return hostPathUse, fmt.Errorf("hostPath type check failed: %s is not a character device", path)
		}
	case corev1.HostPathBlockDev:
		if !exists || mode&fs.ModeDevice == 0 || mode&fs.ModeCharDevice != 0 {
			return hostPathUse, fmt.Errorf("hostPath type check failed: %s is not a block device", path)
		}
	default:
		return hostPathUse, fmt.Errorf("%s is an invalid volume type", t)
	}
	return hostPathUse, nil
}
