//go:build linux

package volume

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// flushBuffers writes out the buffers of block device path (the BLKFLSBUF
// ioctl, what blockdev --flushbufs does).
func flushBuffers(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.IoctlSetInt(int(f.Fd()), unix.BLKFLSBUF, 0); err != nil {
		return fmt.Errorf("flush %s: %w", path, err)
	}
	return nil
}
