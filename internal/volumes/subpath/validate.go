package subpath

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// DirName is the directory of a pod's subPath binds, under the pod's
// directory (upstream's name).
const DirName = "volume-subpaths"

// maxLen bounds a subPath string: no longer path can be opened (PATH_MAX).
const maxLen = 4096

// Validate checks a subPath string (subPathExpr already expanded) before it
// becomes a path: relative, without a ".." component or a NUL byte, and no
// longer than PATH_MAX, as upstream's makeMounts and API validation
// require. Any string it accepts stays inside root when joined to it.
func Validate(sub string) error {
	switch {
	case sub == "":
		return errors.New("subPath is empty")
	case len(sub) > maxLen:
		return fmt.Errorf("subPath is longer than %d bytes", maxLen)
	case strings.ContainsRune(sub, 0):
		return errors.New("subPath contains a NUL byte")
	case filepath.IsAbs(sub) || hasDotDot(sub):
		return errors.New("subPath must be a relative path without '..'")
	}
	return nil
}

func hasDotDot(p string) bool {
	for _, part := range strings.Split(filepath.ToSlash(p), "/") {
		if part == ".." {
			return true
		}
	}
	return false
}

// Request names one subPath mount of one container.
type Request struct {
	// PodDir is the pod's directory, <PodsDir>/<uid>; the bind lives in
	// PodDir/volume-subpaths.
	PodDir string
	// Volume is the volume's name and VolumeDir its host directory (for a
	// hostPath volume the host path).
	Volume    string
	VolumeDir string
	// SubPath is the volumeMount's subPath, subPathExpr already expanded.
	SubPath string
	// Container is the container's name and Index the position of the
	// volumeMount in its volumeMounts.
	Container string
	Index     int
}

func (r Request) validate() error {
	if err := Validate(r.SubPath); err != nil {
		return fmt.Errorf("check subPath %q: %w", r.SubPath, err)
	}
	if !filepath.IsAbs(r.PodDir) || !filepath.IsAbs(r.VolumeDir) {
		return fmt.Errorf("check subPath %q: pod directory %q and volume directory %q must be absolute", r.SubPath, r.PodDir, r.VolumeDir)
	}
	for _, name := range []string{r.Volume, r.Container} {
		if !isPathElement(name) {
			return fmt.Errorf("check subPath %q: %q cannot name a directory", r.SubPath, name)
		}
	}
	if r.Index < 0 {
		return fmt.Errorf("check subPath %q: negative volumeMount index %d", r.SubPath, r.Index)
	}
	return nil
}

// isPathElement reports whether name is one path element of its own: a
// volume or container name that must not reach outside its directory.
func isPathElement(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, "/\x00")
}

// target is where the subPath is bound:
// <PodDir>/volume-subpaths/<volume>/<container>/<index>, as upstream.
func (r Request) target() string {
	return filepath.Join(r.PodDir, DirName, r.Volume, r.Container, strconv.Itoa(r.Index))
}
