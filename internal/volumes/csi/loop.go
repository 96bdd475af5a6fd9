package csi

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// The loop devices that keep block volumes open, as upstream's
// AttachFileDevice and DetachFileDevice (volumepathhandler), which run
// losetup: a loop device over a global map path's entry holds the
// published device open, so that it cannot silently go and another
// device come under its name while the pod runs. Through the loop ioctls
// here (golang.org/x/sys/unix), without an external binary: no Go
// library of the field does loop devices without losetup.

// loopControl and sysBlock are the kernel's loop control device and the
// directory listing block devices.
const (
	loopControl = "/dev/loop-control"
	sysBlock    = "/sys/block"
)

// attachLoop attaches a free loop device to path unless a loop device
// has path (its device and inode) as backing file already (upstream's
// GetLoopDevice, then makeLoopDevice). path is opened read-write, or
// read-only (a read-only loop device) when the device refuses writes.
func attachLoop(path string) error {
	backing, readOnly, err := openBacking(path)
	if err != nil {
		return fmt.Errorf("attach a loop device to %q: %w", path, err)
	}
	defer backing.Close() // the loop device holds its own reference
	var st unix.Stat_t
	if err := unix.Fstat(int(backing.Fd()), &st); err != nil {
		return fmt.Errorf("attach a loop device to %q: %w", path, err)
	}
	found, err := findLoops(st.Dev, st.Ino)
	if err != nil || len(found) > 0 {
		return err
	}
	if err := setLoop(backing, readOnly); err != nil {
		return fmt.Errorf("attach a loop device to %q: %w", path, err)
	}
	return nil
}

func openBacking(path string) (*os.File, bool, error) {
	f, err := os.OpenFile(path, os.O_RDWR|unix.O_CLOEXEC, 0)
	if err == nil {
		return f, false, nil
	}
	if !errors.Is(err, unix.EROFS) && !errors.Is(err, unix.EACCES) && !errors.Is(err, unix.EPERM) {
		return nil, false, err
	}
	f, err = os.OpenFile(path, os.O_RDONLY|unix.O_CLOEXEC, 0)
	return f, true, err
}

// setLoop attaches backing to a free loop device. Another user of the
// machine's loop devices may take the free one first (EBUSY): then it
// asks again.
func setLoop(backing *os.File, readOnly bool) error {
	ctl, err := os.OpenFile(loopControl, os.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer ctl.Close()
	for range 10 {
		n, err := unix.IoctlRetInt(int(ctl.Fd()), unix.LOOP_CTL_GET_FREE)
		if err != nil {
			return fmt.Errorf("LOOP_CTL_GET_FREE: %w", err)
		}
		mode := os.O_RDWR
		if readOnly {
			mode = os.O_RDONLY
		}
		loop, err := os.OpenFile("/dev/loop"+strconv.Itoa(n), mode|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		err = unix.IoctlSetInt(int(loop.Fd()), unix.LOOP_SET_FD, int(backing.Fd()))
		if errors.Is(err, unix.EBUSY) {
			loop.Close()
			continue // taken meanwhile: the next free one
		}
		if err != nil {
			loop.Close()
			return fmt.Errorf("LOOP_SET_FD on %s: %w", loop.Name(), err)
		}
		info := &unix.LoopInfo64{}
		copy(info.File_name[:unix.LO_NAME_SIZE-1], backing.Name())
		if readOnly {
			info.Flags = unix.LO_FLAGS_READ_ONLY
		}
		if err := unix.IoctlLoopSetStatus64(int(loop.Fd()), info); err != nil {
			_ = unix.IoctlSetInt(int(loop.Fd()), unix.LOOP_CLR_FD, 0)
			loop.Close()
			return fmt.Errorf("LOOP_SET_STATUS64 on %s: %w", loop.Name(), err)
		}
		return loop.Close()
	}
	return errors.New("no free loop device")
}

// detachLoop detaches every loop device whose backing file is path (its
// device and inode); path missing, or no such loop device, is nothing to
// do (upstream's DetachFileDevice).
func detachLoop(path string) error {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		return fmt.Errorf("detach the loop device of %q: %w", path, err)
	}
	loops, err := findLoops(st.Dev, st.Ino)
	if err != nil {
		return fmt.Errorf("detach the loop device of %q: %w", path, err)
	}
	for _, dev := range loops {
		if err := clearLoop(dev); err != nil {
			return fmt.Errorf("detach the loop device of %q: %w", path, err)
		}
	}
	return nil
}

func clearLoop(dev string) error {
	f, err := os.OpenFile(dev, os.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.IoctlSetInt(int(f.Fd()), unix.LOOP_CLR_FD, 0); err != nil && !errors.Is(err, unix.ENXIO) {
		return fmt.Errorf("LOOP_CLR_FD on %s: %w", dev, err)
	}
	return nil
}

// findLoops returns the loop devices (/dev/loopN) whose backing file is
// the file of device dev and inode ino (LOOP_GET_STATUS64's lo_device and
// lo_inode).
func findLoops(dev, ino uint64) ([]string, error) {
	entries, err := os.ReadDir(sysBlock)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list loop devices: %w", err)
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, "loop") {
			continue
		}
		if _, err := strconv.Atoi(strings.TrimPrefix(name, "loop")); err != nil {
			continue
		}
		path := filepath.Join("/dev", name)
		f, err := os.OpenFile(path, os.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			continue // gone, or no node for it: not ours
		}
		info, err := unix.IoctlLoopGetStatus64(int(f.Fd()))
		f.Close()
		if err != nil {
			continue // ENXIO: not attached
		}
		if info.Device == dev && info.Inode == ino {
			out = append(out, path)
		}
	}
	return out, nil
}
