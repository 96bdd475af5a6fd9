package containerlogs

import (
	"context"
	"fmt"
	"os"
	"strings"
)

// Tail returns the content of the last maxLines lines of the CRI log file
// at path (no timestamps), cut to its last maxBytes bytes when maxBytes >
// 0. It reads only that file, as upstream does for a termination message
// from the logs (FallbackToLogsOnError: 80 lines, 2048 bytes), and like
// Read it finds the lines going backwards, so it holds at most maxBytes of
// them. Safe for concurrent use.
func Tail(path string, maxLines int, maxBytes int64) (string, error) {
	if maxLines <= 0 {
		return "", nil
	}
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("open log file %q: %w", path, err)
	}
	defer func() { _ = f.Close() }()
	files := newLogFiles(nil, path, f)
	opts := Options{TailLines: int64(maxLines)}
	lr, plan, err := startBacklog(files, opts)
	if err != nil {
		return "", err
	}
	var out interface {
		Write(p []byte) (int, error)
		String() string
	} = &strings.Builder{}
	if maxBytes > 0 {
		out = &lastBytes{max: int(maxBytes)}
	}
	if err := writeBacklog(context.Background(), files, lr, plan, false, newEntryWriter(out, opts)); err != nil {
		return "", fmt.Errorf("read log file %q: %w", path, err)
	}
	return out.String(), nil
}

// lastBytes keeps the last max bytes written to it, as upstream's circular
// buffer for the termination message. Not safe for concurrent use.
type lastBytes struct {
	max int
	buf []byte
}

func (b *lastBytes) Write(p []byte) (int, error) {
	n := len(p)
	if len(p) >= b.max {
		b.buf = append(b.buf[:0], p[len(p)-b.max:]...)
		return n, nil
	}
	if drop := len(b.buf) + len(p) - b.max; drop > 0 {
		b.buf = b.buf[:copy(b.buf, b.buf[drop:])]
	}
	b.buf = append(b.buf, p...)
	return n, nil
}

func (b *lastBytes) String() string { return string(b.buf) }
