//go:build linux

package subpath

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	pathrs "github.com/cyphar/filepath-securejoin/pathrs-lite"
	"github.com/cyphar/filepath-securejoin/pathrs-lite/procfs"
	"golang.org/x/sys/unix"
)

// openSubPath returns a handle on volumeDir/sub that is inside the volume,
// creating the missing directories of sub. The caller closes it.
func openSubPath(volumeDir, sub string) (*os.File, error) {
	realRoot, err := filepath.EvalSymlinks(volumeDir)
	if err != nil {
		return nil, fmt.Errorf("resolve volume directory %q: %w", volumeDir, err)
	}
	root, err := os.OpenFile(realRoot, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open volume directory %q: %w", realRoot, err)
	}
	defer root.Close()
	existing, missing, err := resolve(realRoot, sub)
	if err != nil {
		return nil, err
	}
	rel, err := filepath.Rel(realRoot, existing)
	if err != nil {
		return nil, fmt.Errorf("resolve subPath %q: %w", sub, err)
	}
	h, err := pathrs.OpenatInRoot(root, rel)
	if err != nil {
		return nil, fmt.Errorf("open subPath %q: %w", sub, err)
	}
	if err := checkPath(h, existing, sub); err != nil {
		h.Close()
		return nil, err
	}
	if len(missing) == 0 {
		return h, nil
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(root.Fd()), &st); err != nil {
		h.Close()
		return nil, fmt.Errorf("stat volume directory %q: %w", realRoot, err)
	}
	return makeDirs(h, existing, missing, st.Mode&0o7777, sub)
}

// resolve follows the symlinks of root/sub as upstream does
// (filepath.EvalSymlinks), only to learn where the path leads and to refuse
// a subPath that leaves root; nothing is opened or created through its
// result. It returns the longest prefix of sub that resolves, resolved, and
// the components after it, which do not exist yet.
func resolve(root, sub string) (string, []string, error) {
	parts := strings.Split(filepath.Clean(sub), string(filepath.Separator))
	eval := func(n int) (string, error) {
		return filepath.EvalSymlinks(filepath.Join(root, filepath.Join(parts[:n]...)))
	}
	// Resolving a prefix resolves every shorter one on the way, so the
	// prefixes that resolve are the first n: a binary search bounds the
	// work on a long subPath.
	n := sort.Search(len(parts)+1, func(n int) bool { _, err := eval(n); return err != nil }) - 1
	if n < 0 {
		return "", nil, fmt.Errorf("resolve volume directory %q: it no longer exists", root)
	}
	existing, err := eval(n)
	if err != nil {
		return "", nil, fmt.Errorf("resolve subPath %q: %w", sub, err)
	}
	if !within(root, existing) {
		return "", nil, fmt.Errorf("subPath %q escapes its volume", sub)
	}
	if n < len(parts) {
		// What does not resolve must be absent: a dangling or looping
		// symlink, or a component under a file, is refused rather than
		// created through.
		next := filepath.Join(existing, parts[n])
		if _, err := os.Lstat(next); err == nil {
			return "", nil, fmt.Errorf("resolve subPath %q: %q exists but does not lead to a directory", sub, parts[n])
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", nil, fmt.Errorf("resolve subPath %q: %w", sub, err)
		}
	}
	return existing, parts[n:], nil
}

func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// makeDirs creates the missing components under parent (whose path is
// parentPath), one at a time so that each gets the volume root's mode
// (setgid included) whatever the umask, as upstream's doSafeMakeDir. It
// takes parent and returns a handle on the last directory.
func makeDirs(parent *os.File, parentPath string, missing []string, mode uint32, sub string) (*os.File, error) {
	cur := parent
	for _, part := range missing {
		// MkdirAllHandle refuses the setuid and setgid bits (mkdir ignores
		// them); Fchmod sets them below.
		next, err := pathrs.MkdirAllHandle(cur, part, os.FileMode(mode&0o777)|stickyBit(mode))
		cur.Close()
		if err != nil {
			return nil, fmt.Errorf("create subPath %q: %w", sub, err)
		}
		cur = next
		if err := unix.Fchmod(int(cur.Fd()), mode); err != nil {
			cur.Close()
			return nil, fmt.Errorf("set mode of subPath %q: %w", sub, err)
		}
	}
	if err := checkPath(cur, filepath.Join(parentPath, filepath.Join(missing...)), sub); err != nil {
		cur.Close()
		return nil, err
	}
	return cur, nil
}

func stickyBit(mode uint32) os.FileMode {
	if mode&unix.S_ISVTX != 0 {
		return os.ModeSticky
	}
	return 0
}

// checkPath refuses a handle that is not at want: a component of the
// subPath was swapped (for a symlink, say) after it was resolved, and
// securejoin followed it, inside the volume, somewhere else.
func checkPath(h *os.File, want, sub string) error {
	got, err := procfs.ProcSelfFdReadlink(h)
	if err != nil {
		return fmt.Errorf("check subPath %q: %w", sub, err)
	}
	if got != want {
		return fmt.Errorf("subPath %q changed while it was opened", sub)
	}
	return nil
}
