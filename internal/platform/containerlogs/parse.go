package containerlogs

import (
	"bytes"
	"fmt"
	"time"
)

// Stream is the stream a log entry was written to.
type Stream string

const (
	Stdout Stream = "stdout"
	Stderr Stream = "stderr"
)

// Entry is one line of a CRI log file:
//
//	<RFC3339Nano time> <stdout|stderr> <P|F> <content>
//
// A partial entry (P) holds a piece of a line the runtime split; the line
// goes on in the next entries of the same stream, up to a full one (F).
// Content is the entry's text; for a full entry it ends with "\n".
type Entry struct {
	Time    time.Time
	Stream  Stream
	Partial bool
	Content []byte
}

// ParseLine parses one line of a CRI log file, with or without its
// trailing newline. A line without the P/F tag (older runtimes) is full.
func ParseLine(line []byte) (Entry, error) {
	e, content, err := parseHeader(line)
	if err != nil {
		return Entry{}, err
	}
	e.Content = make([]byte, 0, len(content)+1)
	e.Content = append(e.Content, content...)
	if !e.Partial {
		e.Content = append(e.Content, '\n')
	}
	return e, nil
}

// parseHeader parses a CRI log line's time, stream and tag into an Entry
// without Content, and returns the content, which shares line's memory.
// Given only the start of a long line (at least its first headerBytes),
// it decides the same as on the whole line.
func parseHeader(line []byte) (Entry, []byte, error) {
	line = bytes.TrimSuffix(line, []byte("\n"))
	ts, rest, ok := bytes.Cut(line, []byte(" "))
	if !ok {
		return Entry{}, nil, fmt.Errorf("parse log line %q: missing timestamp", line)
	}
	if len(ts) > maxTimestampBytes {
		return Entry{}, nil, fmt.Errorf("parse log line %q: timestamp longer than %d bytes", line, maxTimestampBytes)
	}
	t, err := time.Parse(time.RFC3339Nano, string(ts))
	if err != nil {
		return Entry{}, nil, fmt.Errorf("parse log line %q: %w", line, err)
	}
	stream, rest, ok := bytes.Cut(rest, []byte(" "))
	if !ok {
		return Entry{}, nil, fmt.Errorf("parse log line %q: missing stream", line)
	}
	e := Entry{Time: t, Stream: Stream(stream)}
	if e.Stream != Stdout && e.Stream != Stderr {
		return Entry{}, nil, fmt.Errorf("parse log line %q: unknown stream %q", line, stream)
	}
	content := rest
	if tag, after, found := bytes.Cut(rest, []byte(" ")); found && (string(tag) == "P" || string(tag) == "F") {
		e.Partial = string(tag) == "P"
		content = after
	} else if string(rest) == "P" || string(rest) == "F" {
		e.Partial = string(rest) == "P"
		content = nil
	}
	return e, content, nil
}

// headerBytes is how much of a line parseHeader needs to see: far more
// than the longest time, stream and tag (about 50 bytes), so a cut line's
// content is never mistaken for a bare tag.
const headerBytes = 256

// maxTimestampBytes bounds the time field. RFC3339Nano takes at most 35
// bytes, but time.Parse reads any number of fractional digits: without a
// bound, a time long enough to push the tag to the end of the first
// headerBytes would make the head of a line parse differently from the
// line.
const maxTimestampBytes = 64
