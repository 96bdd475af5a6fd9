package stats

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// maxWalkInodes bounds one pass of a volume's disk usage walk: a volume a
// pod fills with millions of files costs at most this many stat calls per
// refresh; the walk goes on where it stopped in the next pass, and until
// it is done its count is what it is: at least the usage, never the total.
const maxWalkInodes = 1 << 20

// maxOpenDirs bounds the directories a walk holds open: deeper levels are
// closed, and opened again through ".." (the same directory, by device
// and inode) when the walk comes back up to them.
const maxOpenDirs = 8

// errTreeMoved ends a walk whose tree was moved under it: a directory's
// ".." is no longer the directory the walk came from.
var errTreeMoved = errors.New("a directory was moved during the walk")

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

// duWalk measures the tree below a directory as `du -x` and
// `find | wc -l` do for upstream's volume metrics: allocated bytes and
// inodes (the root included), never following a symlink and never
// leaving the root's filesystem. It walks depth first without recursion,
// holding at most maxOpenDirs+1 directories open, and may be run in
// steps (run) that each count a bounded number of inodes. Owned by one
// goroutine; Close it when it is no longer run.
type duWalk struct {
	// dev is the root's filesystem.
	dev           uint64
	bytes, inodes uint64
	// stack holds the directories being read, the root first; empty once
	// the walk is over.
	stack []dirLevel
	open  int // levels of stack holding a descriptor
	// err says why the walk ended before it saw the whole tree (nil when
	// it did, or is still going).
	err error
	buf []byte
}

// dirLevel is one directory of a walk's stack.
type dirLevel struct {
	fd       int // -1 while closed
	dev, ino uint64
	// off is the getdents position after the last entry counted.
	off int64
}

// newWalk starts a walk of the open directory dir (which stays the
// caller's).
func newWalk(dir *os.File) (*duWalk, error) {
	fd, err := unix.Openat(int(dir.Fd()), ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open %q: %w", dir.Name(), err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("stat %q: %w", dir.Name(), err)
	}
	return &duWalk{
		dev: st.Dev, bytes: uint64(st.Blocks) * 512, inodes: 1,
		stack: []dirLevel{{fd: fd, dev: st.Dev, ino: st.Ino}}, open: 1, buf: make([]byte, 32<<10),
	}, nil
}

// done reports whether the walk is over (complete when err is nil).
func (w *duWalk) done() bool { return len(w.stack) == 0 }

// run walks on until the tree is done or limit more inodes are counted,
// and reports whether the walk is over.
func (w *duWalk) run(limit uint64) bool {
	var counted uint64
	for !w.done() {
		top := len(w.stack) - 1
		if _, err := unix.Seek(w.stack[top].fd, w.stack[top].off, io.SeekStart); err != nil {
			w.end(fmt.Errorf("seek directory: %w", err))
			break
		}
		n, err := unix.Getdents(w.stack[top].fd, w.buf)
		if err != nil || n <= 0 {
			w.pop() // read to its end, or removed under the walk
			continue
		}
		for b := w.buf[:n]; len(b) >= 19; {
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			if reclen < 19 || reclen > len(b) {
				w.end(errors.New("malformed directory entry"))
				return true
			}
			off := int64(binary.NativeEndian.Uint64(b[8:16]))
			name := b[19:reclen]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			b = b[reclen:]
			if string(name) == "." || string(name) == ".." {
				w.stack[top].off = off
				continue
			}
			if counted >= limit {
				return false
			}
			counted++
			if w.entry(top, string(name)) {
				w.stack[top].off = off
				break // read the new directory first
			}
			w.stack[top].off = off
		}
	}
	return true
}

// entry counts the entry name of the directory at level top and reports
// whether it pushed it as a directory to walk.
func (w *duWalk) entry(top int, name string) bool {
	fd := w.stack[top].fd
	var st unix.Stat_t
	if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return false // gone since it was listed
	}
	if st.Dev != w.dev {
		return false // another filesystem mounted below, as du -x
	}
	w.inodes++
	w.bytes += uint64(st.Blocks) * 512
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return false
	}
	cfd, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return false // replaced or removed since its stat
	}
	var cst unix.Stat_t
	if err := unix.Fstat(cfd, &cst); err != nil || cst.Dev != st.Dev || cst.Ino != st.Ino {
		unix.Close(cfd) // replaced since its stat: counted as it was
		return false
	}
	w.stack = append(w.stack, dirLevel{fd: cfd, dev: cst.Dev, ino: cst.Ino})
	w.open++
	if w.open > maxOpenDirs+1 {
		// Close the shallowest open level but the root.
		for i := 1; i < len(w.stack); i++ {
			if w.stack[i].fd >= 0 {
				unix.Close(w.stack[i].fd)
				w.stack[i].fd = -1
				w.open--
				break
			}
		}
	}
	return true
}

// pop leaves the directory on top (always open), opening its parent
// again through ".." when it was closed.
func (w *duWalk) pop() {
	last := w.stack[len(w.stack)-1]
	w.stack = w.stack[:len(w.stack)-1]
	err := w.reopenTop(last.fd)
	unix.Close(last.fd)
	w.open--
	if err != nil {
		w.end(err)
	}
}

// reopenTop opens the closed directory on top of the stack as child's
// "..", which must be the same directory (device and inode).
func (w *duWalk) reopenTop(child int) error {
	if len(w.stack) == 0 || w.stack[len(w.stack)-1].fd >= 0 {
		return nil
	}
	parent := &w.stack[len(w.stack)-1]
	fd, err := unix.Openat(child, "..", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open parent directory: %w", err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Dev != parent.dev || st.Ino != parent.ino {
		unix.Close(fd)
		return errTreeMoved
	}
	parent.fd = fd
	w.open++
	return nil
}

// end stops the walk short for err: what it counted stands as a lower
// bound.
func (w *duWalk) end(err error) {
	w.err = err
	w.Close()
}

// Close closes every directory the walk holds. The counts stay.
func (w *duWalk) Close() {
	for _, l := range w.stack {
		if l.fd >= 0 {
			unix.Close(l.fd)
		}
	}
	w.stack, w.open = nil, 0
}

// duFd measures the whole tree below the open directory dir (which stays
// the caller's), with no bound: for trees berth owns.
func duFd(dir *os.File) (bytes, inodes uint64, err error) {
	w, err := newWalk(dir)
	if err != nil {
		return 0, 0, err
	}
	defer w.Close()
	w.run(^uint64(0))
	return w.bytes, w.inodes, w.err
}

// dirUsage measures dir (which berth, not a pod, owns: the container log
// directories) without following symlinks; a missing dir is empty.
func dirUsage(dir string) (bytes, inodes uint64) {
	f, err := openBeneath(dir, ".")
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	bytes, inodes, _ = duFd(f)
	return bytes, inodes
}
