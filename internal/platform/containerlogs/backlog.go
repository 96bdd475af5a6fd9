package containerlogs

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// logFiles are the files of one container's log, oldest first: rotated
// ones (path.<timestamp>, path.<timestamp>.gz), then the current one. Each
// is opened once, when first needed; one that rotation removed meanwhile
// reads as empty. Not safe for concurrent use.
type logFiles struct {
	names []string
	files []*os.File
}

// newLogFiles takes the names, oldest first, and the open current file.
func newLogFiles(rotated []string, current string, cur *os.File) *logFiles {
	l := &logFiles{names: append(rotated[:len(rotated):len(rotated)], current), files: make([]*os.File, len(rotated)+1)}
	l.files[len(rotated)] = cur
	return l
}

func (l *logFiles) current() int { return len(l.names) - 1 }

func isGzip(name string) bool { return strings.HasSuffix(name, ".gz") }

// open returns file i, nil when it is gone.
func (l *logFiles) open(i int) (*os.File, error) {
	if l.files[i] != nil {
		return l.files[i], nil
	}
	f, err := os.Open(l.names[i])
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open log file %q: %w", l.names[i], err)
	}
	l.files[i] = f
	return f, nil
}

// closeRotated closes the rotated files; the caller owns the current one.
func (l *logFiles) closeRotated() {
	for _, f := range l.files[:l.current()] {
		if f != nil {
			_ = f.Close()
		}
	}
}

// planTail finds where the last opts.TailLines lines of the log begin,
// going backwards from the end of the current file through the rotated
// ones, newest first, until the lines are found. With opts.Follow, the
// current file's unterminated last line is not a line yet: the follower
// writes it once it is complete.
func planTail(l *logFiles, opts Options) (tailPlan, error) {
	c := newTailCounter(opts.TailLines)
	var end int64
	for i := l.current(); i >= 0; i-- {
		f, err := l.open(i)
		if err != nil || f == nil {
			if err != nil {
				return tailPlan{}, err
			}
			continue
		}
		var done bool
		var size int64
		if isGzip(l.names[i]) {
			done, err = countGzip(f, i, c, opts)
		} else {
			size, done, err = countPlain(f, i, c, opts, opts.Follow && i == l.current())
		}
		if i == l.current() {
			end = size
		}
		if err != nil {
			return tailPlan{}, fmt.Errorf("tail log file %q: %w", l.names[i], err)
		}
		if done {
			break
		}
	}
	p := c.plan()
	p.end = end
	return p, nil
}

// countPlain feeds c the kept entries of a plain file, newest first, and
// returns the file's size it counted up to.
func countPlain(f *os.File, file int, c *tailCounter, opts Options, skipUnterminated bool) (int64, bool, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, false, err
	}
	size := st.Size()
	s, err := newBackScanner(f, size)
	if err != nil {
		return 0, false, err
	}
	skip := skipUnterminated && s.unterminated
	for {
		start, head, ok, err := s.prev()
		if err != nil || !ok {
			return size, false, err
		}
		if skip {
			skip = false
			continue
		}
		if e, _, err := parseHeader(head); err == nil && keep(e, opts) && c.visit(e, logPos{file, start}) {
			return size, true, nil
		}
	}
}

// countGzip feeds c the kept entries of a gzipped file, newest first. A
// gzip stream reads only forwards: it is read once, keeping per stream
// only the entries that may end one of the lines c still lacks.
func countGzip(f *os.File, file int, c *tailCounter, opts Options) (bool, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return false, err
	}
	gz, err := gzip.NewReader(f)
	if err != nil {
		return false, err
	}
	defer func() { _ = gz.Close() }()
	need := c.stillNeeded()
	streams := map[Stream]*lineEnds{Stdout: {max: need}, Stderr: {max: need}}
	h := newHeadReader(gz)
	var off int64
	for {
		head, n, err := h.next()
		if err != nil {
			return false, err
		}
		if n == 0 {
			return replay(c, file, streams), nil
		}
		if e, _, err := parseHeader(head); err == nil && keep(e, opts) {
			streams[e.Stream].add(e, off)
		}
		off += n
	}
}

// writeBacklog writes what plan selects of the rotated files and then of
// the current file, through lr (which follow goes on with). Without
// follow, an unterminated last line is written as it is.
func writeBacklog(ctx context.Context, l *logFiles, lr *lineReader, plan tailPlan, follow bool, w *entryWriter) error {
	sinkFor := func(file int) func(Entry, int64) error {
		return func(e Entry, off int64) error {
			if !plan.selects(e.Stream, logPos{file, off}) {
				return nil
			}
			return w.write(e)
		}
	}
	for i := plan.start.file; i < l.current(); i++ {
		from := int64(0)
		if i == plan.start.file {
			from = plan.start.off
		}
		if err := readRotated(ctx, l, i, from, sinkFor(i)); err != nil {
			return err
		}
	}
	sink := sinkFor(l.current())
	if err := lr.drain(ctx, sink); err != nil {
		return err
	}
	if follow {
		return nil
	}
	return lr.rest(ctx, sink)
}

// readRotated sends the entries of rotated file i from offset from on.
func readRotated(ctx context.Context, l *logFiles, i int, from int64, sink func(Entry, int64) error) error {
	f, err := l.open(i)
	if err != nil || f == nil {
		return err
	}
	name := l.names[i]
	var r io.Reader = f
	if isGzip(name) {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("read log file %q: %w", name, err)
		}
		gz, err := gzip.NewReader(f)
		if err != nil {
			return fmt.Errorf("read log file %q: %w", name, err)
		}
		defer func() { _ = gz.Close() }()
		if _, err := io.CopyN(io.Discard, gz, from); err != nil {
			return fmt.Errorf("read log file %q: %w", name, err)
		}
		r = gz
	} else if _, err := f.Seek(from, io.SeekStart); err != nil {
		return fmt.Errorf("read log file %q: %w", name, err)
	}
	lr := newLineReader(r, from)
	if err := lr.drain(ctx, sink); err != nil {
		return err
	}
	return lr.rest(ctx, sink)
}
