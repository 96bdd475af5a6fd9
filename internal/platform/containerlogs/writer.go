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
