package containerlogs

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// Watch tells Read how to follow a log.
type Watch struct {
	// Clock paces the polling of the log file.
	Clock clock.Clock
	// Poll is how often the file is checked for new lines and rotation.
	Poll time.Duration
	// Running reports whether the container may still write to its log.
	// Read stops following once it reports false and the file is drained.
	Running func(ctx context.Context) bool
}

// Read writes the log of a container whose current log file is path to
// out, as opts select. Rotated files beside path (path.<timestamp>, and
// path.<timestamp>.gz) are read first, oldest first. With opts.Follow it
// then waits for new lines, going on to the new file when path is rotated,
// until the container stops running and the file is drained, or ctx ends.
// watch is used only to follow.
func Read(ctx context.Context, path string, opts Options, out io.Writer, watch Watch) error {
	files, err := rotatedFiles(path)
	if err != nil {
		return err
	}
	cur, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open log file %q: %w", path, err)
	}
	defer func() { _ = cur.Close() }()
	w := newEntryWriter(out, opts)
	lr := newLineReader(cur)
	err = readBacklog(ctx, files, lr, opts, w)
	if err == nil && opts.Follow {
		err = follow(ctx, path, cur, lr, w, watch)
	}
	if errors.Is(err, errLimit) {
		return nil
	}
	return err
}

// readBacklog writes what the rotated files and the current one hold now.
func readBacklog(ctx context.Context, rotated []string, lr *lineReader, opts Options, w *entryWriter) error {
	sink := w.write
	var tail *tailLines
	if opts.TailLines >= 0 {
		tail = newTailLines(int(opts.TailLines))
		sink = func(e Entry) error {
			if keep(e, opts) {
				tail.add(e)
			}
			return nil
		}
	}
	for _, name := range rotated {
		if err := readFile(ctx, name, sink); err != nil {
			return err
		}
	}
	if err := lr.drain(ctx, sink); err != nil {
		return err
	}
	if !opts.Follow {
		// A last line the runtime has not finished is written as it is.
		if err := lr.rest(ctx, sink); err != nil {
			return err
		}
	}
	if tail == nil {
		return nil
	}
	for _, e := range tail.entries() {
		if err := w.write(e); err != nil {
			return err
		}
	}
	return nil
}

// rotatedFiles lists the rotated siblings of path, oldest first. Their
// names are path plus "." and a timestamp that sorts by time, optionally
// followed by ".gz".
func rotatedFiles(path string) ([]string, error) {
	matches, err := filepath.Glob(globEscape(path) + ".*")
	if err != nil {
		return nil, fmt.Errorf("list rotated logs of %q: %w", path, err)
	}
	var out []string
	for _, m := range matches {
		if strings.HasSuffix(m, ".tmp") {
			continue
		}
		out = append(out, m)
	}
	slices.Sort(out)
	return out, nil
}

func globEscape(s string) string {
	r := strings.NewReplacer(`*`, `\*`, `?`, `\?`, `[`, `\[`, `\`, `\\`)
	return r.Replace(s)
}

// readFile sends every entry of a whole log file, gzipped if its name ends
// in ".gz", to sink.
func readFile(ctx context.Context, name string, sink func(Entry) error) error {
	f, err := os.Open(name)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil // removed by rotation meanwhile
		}
		return fmt.Errorf("open log file %q: %w", name, err)
	}
	defer func() { _ = f.Close() }()
	var r io.Reader = f
	if strings.HasSuffix(name, ".gz") {
		gz, err := gzip.NewReader(f)
		if err != nil {
			return fmt.Errorf("read log file %q: %w", name, err)
		}
		defer func() { _ = gz.Close() }()
		r = gz
	}
	lr := newLineReader(r)
	if err := lr.drain(ctx, sink); err != nil {
		return err
	}
	return lr.rest(ctx, sink)
}

// lineReader reads whole lines; a line read up to EOF without its newline
// is held back until the rest arrives (the runtime may be writing it).
type lineReader struct {
	r    *bufio.Reader
	held []byte
}

func newLineReader(r io.Reader) *lineReader { return &lineReader{r: bufio.NewReader(r)} }

// drain sends the entries of every whole line up to EOF to sink. Lines
// that do not parse are logged and skipped.
func (l *lineReader) drain(ctx context.Context, sink func(Entry) error) error {
	for {
		line, err := l.r.ReadBytes('\n')
		if len(l.held) > 0 {
			line = append(l.held, line...)
			l.held = nil
		}
		if errors.Is(err, io.EOF) {
			l.held = line
			return nil
		}
		if err != nil {
			return fmt.Errorf("read log: %w", err)
		}
		if err := sendLine(ctx, line, sink); err != nil {
			return err
		}
	}
}

// rest sends a held, unterminated last line.
func (l *lineReader) rest(ctx context.Context, sink func(Entry) error) error {
	line := l.held
	l.held = nil
	if len(bytes.TrimSpace(line)) == 0 {
		return nil
	}
	return sendLine(ctx, line, sink)
}

func sendLine(ctx context.Context, line []byte, sink func(Entry) error) error {
	e, err := ParseLine(line)
	if err != nil {
		klog.FromContext(ctx).V(2).Info("Skipping unparsable log line", "err", err)
		return nil
	}
	return sink(e)
}

// follow writes new entries of the current file as they come, moving to
// the new file at path when the current one is rotated away.
func follow(ctx context.Context, path string, cur *os.File, lr *lineReader, w *entryWriter, watch Watch) error {
	f := cur
	for {
		if err := lr.drain(ctx, w.write); err != nil {
			return err
		}
		if next := reopenIfRotated(path, f); next != nil {
			// The runtime may have written to the old file until it
			// reopened the new one: drain it before moving on.
			if err := lr.drain(ctx, w.write); err != nil {
				_ = next.Close()
				return err
			}
			if f != cur {
				_ = f.Close()
			}
			f, lr = next, newLineReader(next)
			continue
		}
		if !watch.Running(ctx) {
			// The container is gone: what it wrote before exiting is in
			// the file; drain it once more and stop.
			err := lr.drain(ctx, w.write)
			if f != cur {
				_ = f.Close()
			}
			return err
		}
		select {
		case <-ctx.Done():
			if f != cur {
				_ = f.Close()
			}
			return nil
		case <-watch.Clock.After(watch.Poll):
		}
	}
}

// reopenIfRotated returns path opened anew when it is no longer the file f,
// or nil when it still is (or there is no new file yet).
func reopenIfRotated(path string, f *os.File) *os.File {
	cur, err := f.Stat()
	if err != nil {
		return nil
	}
	st, err := os.Stat(path)
	if err != nil || os.SameFile(cur, st) {
		return nil
	}
	next, err := os.Open(path)
	if err != nil {
		return nil
	}
	return next
}
