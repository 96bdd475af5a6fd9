package containerlogs

import (
	"errors"
	"io"
	"time"
)

// errLimit ends a read when LimitBytes is reached; callers treat it as success.
var errLimit = errors.New("log byte limit reached")

// keep reports whether opts select the entry (stream and since).
func keep(e Entry, opts Options) bool {
	if opts.Stream != "" && e.Stream != opts.Stream {
		return false
	}
	return opts.Since.IsZero() || !e.Time.Before(opts.Since)
}

// entryWriter writes selected entries to out: partial entries continue
// their line, so a timestamp prefixes only the first piece of each line,
// and output stops at LimitBytes. Not safe for concurrent use.
type entryWriter struct {
	out  io.Writer
	opts Options
	// midLine is true for a stream whose last written entry was partial.
	midLine map[Stream]bool
	written int64
}

func newEntryWriter(out io.Writer, opts Options) *entryWriter {
	return &entryWriter{out: out, opts: opts, midLine: map[Stream]bool{}}
}

// write writes e if opts select it; it returns errLimit once the byte
// limit is reached (after writing up to it).
func (w *entryWriter) write(e Entry) error {
	if !keep(e, w.opts) {
		return nil
	}
	var buf []byte
	if w.opts.Timestamps && !w.midLine[e.Stream] {
		buf = append(buf, e.Time.UTC().Format(time.RFC3339Nano)...)
		buf = append(buf, ' ')
	}
	buf = append(buf, e.Content...)
	w.midLine[e.Stream] = e.Partial
	limited := false
	if w.opts.LimitBytes > 0 {
		if left := w.opts.LimitBytes - w.written; int64(len(buf)) >= left {
			buf, limited = buf[:left], true
		}
	}
	n, err := w.out.Write(buf)
	w.written += int64(n)
	if err != nil {
		return err
	}
	if limited {
		return errLimit
	}
	return nil
}

// tailLines keeps the last n lines of the entries added, a line being the
// partial entries of one stream up to and including its full entry.
// Not safe for concurrent use.
type tailLines struct {
	n       int
	lines   [][]Entry
	pending map[Stream][]Entry
	// order is the streams with pending entries, oldest first.
	order []Stream
}

func newTailLines(n int) *tailLines {
	return &tailLines{n: n, pending: map[Stream][]Entry{}}
}

func (t *tailLines) add(e Entry) {
	if len(t.pending[e.Stream]) == 0 {
		t.order = append(t.order, e.Stream)
	}
	line := append(t.pending[e.Stream], e)
	if e.Partial {
		t.pending[e.Stream] = line
		return
	}
	delete(t.pending, e.Stream)
	for i, s := range t.order {
		if s == e.Stream {
			t.order = append(t.order[:i:i], t.order[i+1:]...)
			break
		}
	}
	t.push(line)
}

func (t *tailLines) push(line []Entry) {
	if t.n <= 0 {
		return
	}
	t.lines = append(t.lines, line)
	if len(t.lines) > t.n {
		t.lines = t.lines[len(t.lines)-t.n:]
	}
}

// entries returns the entries of the last n lines, oldest first, counting
// a line still being written as the last.
func (t *tailLines) entries() []Entry {
	for _, s := range t.order {
		t.push(t.pending[s])
	}
	t.order, t.pending = nil, map[Stream][]Entry{}
	var out []Entry
	for _, l := range t.lines {
		out = append(out, l...)
	}
	return out
}
