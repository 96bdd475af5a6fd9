package atomicwriter

import (
	"fmt"
	"math/rand/v2"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"
)

const (
	// DataDirName is the symlink that points at the current version.
	DataDirName = "..data"
	// newDataDirName is the symlink renamed over DataDirName.
	newDataDirName = "..data_tmp"
	// tsLayout is the timestamp prefix of a version directory, as upstream.
	tsLayout = "..2006_01_02_15_04_05."
	// maxPathLength and maxNameLength bound an item path and each of its
	// elements, as upstream's validatePath.
	maxPathLength = 4096
	maxNameLength = 255
)

// versionName matches the names of the version directories the writer
// makes: tsLayout followed by decimal digits (a random number, as
// upstream's os.MkdirTemp adds).
var versionName = regexp.MustCompile(`^\.\.[0-9]{4}_[0-9]{2}_[0-9]{2}_[0-9]{2}_[0-9]{2}_[0-9]{2}\.[0-9]+$`)

// isVersionName reports whether name is one the writer gives a version
// directory. Only such names are read through ..data or removed as old
// versions.
func isVersionName(name string) bool { return versionName.MatchString(name) }

// newVersionName names a version directory written at now. The suffix is
// random, as os.MkdirTemp's, and not derived from now: a name must not come
// back soon after its directory was removed, or a reader that resolved
// ..data to the old directory could read files of two versions.
func newVersionName(now time.Time) string {
	return now.UTC().Format(tsLayout) + strconv.FormatUint(uint64(rand.Uint32()), 10)
}

// CleanPath validates an item path and returns the one form the writer
// uses for it everywhere: path.Clean of it. The rules are upstream's (not
// empty, relative, at most 4096 bytes, elements at most 255 bytes, no ".."
// element) and one more, checked on the cleaned form so that "./..data"
// cannot pass as "..data": the first element must not start with "..",
// which keeps every item off the writer's own names (..data, ..data_tmp
// and the version directories).
func CleanPath(p string) (string, error) {
	switch {
	case p == "":
		return "", fmt.Errorf("invalid path: must not be empty")
	case len(p) > maxPathLength:
		return "", fmt.Errorf("invalid path %q: must be at most %d characters", p, maxPathLength)
	case path.IsAbs(p):
		return "", fmt.Errorf("invalid path %q: must be a relative path", p)
	}
	for _, elem := range strings.Split(p, "/") {
		if elem == ".." {
			return "", fmt.Errorf("invalid path %q: must not contain '..'", p)
		}
		if len(elem) > maxNameLength {
			return "", fmt.Errorf("invalid path %q: file names must be at most %d characters", p, maxNameLength)
		}
	}
	clean := path.Clean(p)
	top, _, _ := strings.Cut(clean, "/")
	switch {
	case clean == ".":
		return "", fmt.Errorf("invalid path %q: must name a file", p)
	case strings.HasPrefix(top, ".."):
		return "", fmt.Errorf("invalid path %q: must not start with '..'", p)
	}
	return clean, nil
}

// topLevel returns the first element of a cleaned path.
func topLevel(clean string) string {
	top, _, _ := strings.Cut(clean, "/")
	return top
}
