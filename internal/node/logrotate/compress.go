package logrotate

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// compress gzips name to name.gz through name.tmp, then removes name, as
// upstream's compressLog. Neither file is opened through a symlink.
func (d *logDir) compress(name string) (err error) {
	src, err := d.root.OpenFile(name, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return fmt.Errorf("open log %q: %w", name, err)
	}
	defer func() { _ = src.Close() }()
	st, err := src.Stat()
	if err != nil {
		return fmt.Errorf("stat log %q: %w", name, err)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("compress log %q: not a regular file", name)
	}
	tmp := name + tmpSuffix
	dst, err := d.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|unix.O_NOFOLLOW, st.Mode().Perm())
	if err != nil {
		return fmt.Errorf("create temporary log %q: %w", tmp, err)
	}
	defer func() {
		if err != nil {
			_ = d.root.Remove(tmp)
		}
	}()
	w := gzip.NewWriter(dst)
	_, err = io.Copy(w, src)
	err = errors.Join(err, w.Close(), dst.Close())
	if err != nil {
		return fmt.Errorf("compress log %q to %q: %w", name, tmp, err)
	}
	if err = d.root.Rename(tmp, name+compressSuffix); err != nil {
		return fmt.Errorf("rename %q to %q: %w", tmp, name+compressSuffix, err)
	}
	return d.remove(name)
}
