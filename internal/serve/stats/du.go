package stats

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// maxWalkInodes bounds one disk usage walk: a volume a pod fills with
// millions of files costs at most this many stat calls per refresh.
const maxWalkInodes = 1 << 20

// errWalkBound reports a walk cut short at maxWalkInodes.
var errWalkBound = errors.New("walk bound reached")

// openBeneath opens the directory rel below the directory root without
// following any symlink (the root itself included when rel is "."), so a
// pod-writable tree cannot redirect it.
func openBeneath(root, rel string) (*os.File, error) {
	rootFd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open %q: %w", root, err)
	}
	defer unix.Close(rootFd)
	fd, err := unix.Openat2(rootFd, rel, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return nil, fmt.Errorf("open %q below %q: %w", rel, root, err)
	}
	return os.NewFile(uintptr(fd), root+"/"+rel), nil
}

// duFd measures the tree below the open directory dir as `du -x` and
// `find | wc -l` do for upstream's volume metrics: allocated bytes and
// inodes (dir itself included), never following a symlink and never
// leaving dir's filesystem. It stops at maxWalkInodes with errWalkBound
// and what it counted so far. dir stays open; the caller closes it.
func duFd(dir *os.File) (bytes, inodes uint64, err error) { return duFdLimit(dir, maxWalkInodes) }

// duFdLimit is duFd with a bound of limit inodes.
func duFdLimit(dir *os.File, limit uint64) (bytes, inodes uint64, err error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(dir.Fd()), &st); err != nil {
		return 0, 0, fmt.Errorf("stat %q: %w", dir.Name(), err)
	}
	w := walker{dev: st.Dev, bytes: uint64(st.Blocks) * 512, inodes: 1, limit: limit}
	err = w.dir(dir)
	return w.bytes, w.inodes, err
}

// walker holds one walk's running totals.
type walker struct {
	dev           uint64
	bytes, inodes uint64
	// limit is the most inodes the walk counts.
	limit uint64
}

func (w *walker) dir(d *os.File) error {
	fd := int(d.Fd())
	for {
		names, err := d.Readdirnames(256)
		for _, name := range names {
			if w.inodes >= w.limit {
				return errWalkBound
			}
			var st unix.Stat_t
			if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				continue // gone since it was listed
			}
			if st.Dev != w.dev {
				continue // another filesystem mounted below, as du -x
			}
			w.inodes++
			w.bytes += uint64(st.Blocks) * 512
			if st.Mode&unix.S_IFMT != unix.S_IFDIR {
				continue
			}
			if err := w.sub(fd, name); err != nil {
				return err
			}
		}
		if err != nil || len(names) == 0 {
			return nil // io.EOF, or a directory that vanished mid-walk
		}
	}
}

func (w *walker) sub(parent int, name string) error {
	cfd, err := unix.Openat(parent, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil // replaced or removed since its stat
	}
	child := os.NewFile(uintptr(cfd), name)
	defer child.Close()
	return w.dir(child)
}

// dirUsage measures dir (which berth, not a pod, owns: the container log
// directories), bounded and without following symlinks; a missing dir
// is empty.
func dirUsage(dir string) (bytes, inodes uint64) {
	f, err := openBeneath(dir, ".")
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	bytes, inodes, _ = duFd(f)
	return bytes, inodes
}
