package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// blockSize is the size of each block volume's backing file (sparse).
const blockSize = 64 << 20

// blockDevices gives the mock's block publications real block devices,
// which upstream's mock does not (it makes a directory at any target): a
// volume published with a Block capability is a sparse file in dir, of
// blockSize, attached to a free loop device (through /dev/loop-control,
// no losetup), and its target path a device node (mknod) of that loop
// device. The loop device is held open while the volume is published
// somewhere and has autoclear set, so that it detaches once the last
// publication went and nothing else has it open (and when the driver
// dies). The backing file stays for the next publication of the volume
// (its data too) until stop. Safe for concurrent use.
type blockDevices struct {
	dir string
	// mu guards loops.
	mu    sync.Mutex
	loops map[string]*loopDevice // by volume ID
}

// loopDevice is a volume's attached loop device.
type loopDevice struct {
	f       *os.File // the loop device, open
	rdev    uint64
	targets map[string]bool
}

func newBlockDevices() (*blockDevices, error) {
	dir, err := os.MkdirTemp("", "csi-mock-block")
	if err != nil {
		return nil, fmt.Errorf("make the block volumes' directory: %w", err)
	}
	return &blockDevices{dir: dir, loops: map[string]*loopDevice{}}, nil
}

// publish makes target (the mock made it a directory, or it is a device
// node of an earlier publication) a block device node of volume id's
// loop device.
func (b *blockDevices) publish(id, target string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	loop, err := b.attach(id)
	if err != nil {
		return status.Errorf(codes.Internal, "attach a loop device for volume %q: %v", id, err)
	}
	var st unix.Stat_t
	if err := unix.Lstat(target, &st); err == nil && st.Mode&unix.S_IFMT == unix.S_IFBLK && st.Rdev == loop.rdev {
		loop.targets[target] = true
		return nil
	}
	if err := os.Remove(target); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return status.Errorf(codes.Internal, "replace target %q with a device: %v", target, err)
	}
	if err := unix.Mknod(target, unix.S_IFBLK|0o660, int(loop.rdev)); err != nil {
		return status.Errorf(codes.Internal, "make device node %q: %v", target, err)
	}
	loop.targets[target] = true
	return nil
}

// unpublish forgets target (the mock removed it) and detaches the loop
// device of volume id when it was its last publication.
func (b *blockDevices) unpublish(id, target string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	loop := b.loops[id]
	if loop == nil {
		return
	}
	delete(loop.targets, target)
	if len(loop.targets) == 0 {
		loop.detach()
		delete(b.loops, id)
	}
}

// stop detaches every loop device and removes the backing files.
func (b *blockDevices) stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for id, loop := range b.loops {
		loop.detach()
		delete(b.loops, id)
	}
	_ = os.RemoveAll(b.dir)
}

// attach returns volume id's loop device, attaching one to its backing
// file (made when missing) first. Holds mu.
func (b *blockDevices) attach(id string) (*loopDevice, error) {
	if loop := b.loops[id]; loop != nil {
		return loop, nil
	}
	backing, err := os.OpenFile(filepath.Join(b.dir, fmt.Sprintf("%x.img", id)), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	defer backing.Close() // the loop device holds its own reference
	if err := backing.Truncate(blockSize); err != nil {
		return nil, err
	}
	f, err := attachLoop(backing)
	if err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		f.Close()
		return nil, err
	}
	loop := &loopDevice{f: f, rdev: st.Rdev, targets: map[string]bool{}}
	b.loops[id] = loop
	return loop, nil
}

// attachLoop attaches backing to a free loop device, with autoclear, and
// returns the device open. Another user of the machine's loop devices may
// take the free one first (EBUSY): then it asks again.
func attachLoop(backing *os.File) (*os.File, error) {
	ctl, err := os.OpenFile("/dev/loop-control", os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer ctl.Close()
	for range 10 {
		n, err := unix.IoctlRetInt(int(ctl.Fd()), unix.LOOP_CTL_GET_FREE)
		if err != nil {
			return nil, fmt.Errorf("LOOP_CTL_GET_FREE: %w", err)
		}
		f, err := os.OpenFile("/dev/loop"+strconv.Itoa(n), os.O_RDWR, 0)
		if err != nil {
			return nil, err
		}
		if err := unix.IoctlSetInt(int(f.Fd()), unix.LOOP_SET_FD, int(backing.Fd())); err != nil {
			f.Close()
			if errors.Is(err, unix.EBUSY) {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			return nil, fmt.Errorf("LOOP_SET_FD: %w", err)
		}
		info := &unix.LoopInfo64{Flags: unix.LO_FLAGS_AUTOCLEAR}
		copy(info.File_name[:], backing.Name())
		if err := unix.IoctlLoopSetStatus64(int(f.Fd()), info); err != nil {
			_ = unix.IoctlSetInt(int(f.Fd()), unix.LOOP_CLR_FD, 0)
			f.Close()
			return nil, fmt.Errorf("LOOP_SET_STATUS64: %w", err)
		}
		return f, nil
	}
	return nil, errors.New("no free loop device")
}

// detach clears the loop device (at once when nobody else has it open,
// else when the last one closes it: autoclear) and closes it.
func (l *loopDevice) detach() {
	_ = unix.IoctlSetInt(int(l.f.Fd()), unix.LOOP_CLR_FD, 0)
	l.f.Close()
}
