package containerlogs

import (
	"context"
	"fmt"
	"os"
	"strings"
)

// Tail returns the content of the last maxLines lines of the CRI log file
// at path (partial entries joined into their lines, no timestamps), cut
// to its last maxBytes bytes when maxBytes > 0. It reads only that file,
// as upstream does for a termination message from the logs
// (FallbackToLogsOnError: 80 lines, 2048 bytes). Safe for concurrent use.
func Tail(path string, maxLines int, maxBytes int64) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("open log file %q: %w", path, err)
	}
	defer func() { _ = f.Close() }()
	ctx := context.Background()
	tail := newTailLines(maxLines)
	add := func(e Entry) error { tail.add(e); return nil }
	lr := newLineReader(f)
	if err := lr.drain(ctx, add); err != nil {
		return "", fmt.Errorf("read log file %q: %w", path, err)
	}
	if err := lr.rest(ctx, add); err != nil {
		return "", fmt.Errorf("read log file %q: %w", path, err)
	}
	var b strings.Builder
	for _, e := range tail.entries() {
		b.Write(e.Content)
	}
	s := b.String()
	if maxBytes > 0 && int64(len(s)) > maxBytes {
		s = s[int64(len(s))-maxBytes:]
	}
	return s, nil
}
