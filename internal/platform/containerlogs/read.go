package containerlogs

import (
	"bufio"
	"bytes"
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
// path.<timestamp>.gz) are read first, oldest first. With opts.TailLines
// it first finds, going backwards from the end, where the last lines
// begin (tailplan.go), so its memory does not grow with the log. With
// opts.Follow it then waits for new lines, going on to the new file when
// path is rotated, until the container stops running and the file is
// drained, or ctx ends. watch is used only to follow.
func Read(ctx context.Context, path string, opts Options, out io.Writer, watch Watch) error {
	rotated, err := rotatedFiles(path)
	if err != nil {
		return err
	}
	cur, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open log file %q: %w", path, err)
	}
	defer func() { _ = cur.Close() }()
	files := newLogFiles(rotated, path, cur)
	defer files.closeRotated()
	lr, plan, err := startBacklog(files, opts)
	if err != nil {
		return err
	}
	w := newEntryWriter(out, opts)
	err = writeBacklog(ctx, files, lr, plan, opts.Follow, w)
	if err == nil && opts.Follow {
		err = follow(ctx, path, cur, lr, w, watch)
	}
	if errors.Is(err, errLimit) {
		return nil
	}
	return err
}

// startBacklog plans the backlog (all of it without tailLines) and
// returns a line reader on the current file at the plan's position in it.
func startBacklog(files *logFiles, opts Options) (*lineReader, tailPlan, error) {
	var plan tailPlan
	if opts.TailLines >= 0 {
		var err error
		if plan, err = planTail(files, opts); err != nil {
			return nil, tailPlan{}, err
		}
	}
	cur, from := files.files[files.current()], int64(0)
	if plan.start.file == files.current() {
		from = plan.start.off
	}
	if _, err := cur.Seek(from, io.SeekStart); err != nil {
		return nil, tailPlan{}, fmt.Errorf("read log file %q: %w", files.names[files.current()], err)
	}
	if opts.TailLines >= 0 && !opts.Follow {
		// The tail is what the plan counted: not the lines written since.
		return newLineReader(io.LimitReader(cur, max(plan.end-from, 0)), from), plan, nil
	}
	return newLineReader(cur, from), plan, nil
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

// lineReader reads whole lines; a line read up to EOF without its newline
// is held back until the rest arrives (the runtime may be writing it). It
// counts offsets, so each entry comes with where its line starts.
type lineReader struct {
	r    *bufio.Reader
	held []byte
	// off is the offset in the file of the next byte r gives.
	off int64
}

// newLineReader reads r, whose first byte is at offset off in its file.
func newLineReader(r io.Reader, off int64) *lineReader {
	return &lineReader{r: bufio.NewReader(r), off: off}
}

// drain sends the entries of every whole line up to EOF to sink, with the
// offset of its line. Lines that do not parse are logged and skipped.
func (l *lineReader) drain(ctx context.Context, sink func(Entry, int64) error) error {
	for {
		at := l.off - int64(len(l.held))
		line, err := l.r.ReadBytes('\n')
		l.off += int64(len(line))
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
		if err := sendLine(ctx, line, at, sink); err != nil {
			return err
		}
	}
}

// rest sends a held, unterminated last line.
func (l *lineReader) rest(ctx context.Context, sink func(Entry, int64) error) error {
	line := l.held
	l.held = nil
	if len(bytes.TrimSpace(line)) == 0 {
		return nil
	}
	return sendLine(ctx, line, l.off-int64(len(line)), sink)
}

func sendLine(ctx context.Context, line []byte, at int64, sink func(Entry, int64) error) error {
	e, err := ParseLine(line)
	if err != nil {
		klog.FromContext(ctx).V(2).Info("Skipping unparsable log line", "err", err)
		return nil
	}
	return sink(e, at)
}

// follow writes new entries of the current file as they come, moving to
// the new file at path when the current one is rotated away.
func follow(ctx context.Context, path string, cur *os.File, lr *lineReader, w *entryWriter, watch Watch) error {
	write := func(e Entry, _ int64) error { return w.write(e) }
	f := cur
	for {
		if err := lr.drain(ctx, write); err != nil {
			return err
		}
		if next := reopenIfRotated(path, f); next != nil {
			// The runtime may have written to the old file until it
			// reopened the new one: drain it before moving on.
			if err := lr.drain(ctx, write); err != nil {
				_ = next.Close()
				return err
			}
			if f != cur {
				_ = f.Close()
			}
			f, lr = next, newLineReader(next, 0)
			continue
		}
		if !watch.Running(ctx) {
			// The container is gone: what it wrote before exiting is in
			// the file; drain it once more and stop.
			err := lr.drain(ctx, write)
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
