package containerlogs

import (
	"cmp"
	"slices"
)

// A tail of n lines is found in two passes, so that memory never grows
// with the log: planTail (backlog.go) walks the log backwards, newest file
// first, looking only at each line's header, until it knows where the last
// n lines begin; writeBacklog then reads forwards from there and writes
// the entries the plan selects, in file order. Neither pass keeps more
// than a block of the file and one line; only a .gz file, which reads
// forwards, also keeps the offsets of the lines that may end the tail
// (lineEnds: at most tailLines+1 per stream, 8 bytes each).
//
// A line is one stream's entries up to and including a full (F) one; a
// stream's partial entries after its last full one are its last line,
// still being written. Lines are ordered by where they end: the last n
// lines are the n whose last entries come last. Only the entries Options
// keep (stream, since) count.

// logPos is where a raw line of a log starts: the index of its file among
// the log's files (oldest first, the current file last) and its offset in
// that file's content (decompressed, for a .gz file).
type logPos struct {
	file int
	off  int64
}

func (p logPos) before(q logPos) bool {
	return p.file < q.file || p.file == q.file && p.off < q.off
}

// tailPlan is what the forward pass writes: from start on, the entries
// each stream has after its bound. A stream without a bound writes every
// entry from start on; the zero plan writes the whole log. A plain value.
type tailPlan struct {
	start logPos
	after map[Stream]logPos
	// end is the size of the current file when it was counted: a read
	// that does not follow stops there, so lines the container writes
	// meanwhile do not make the tail longer than asked.
	end int64
}

func (p tailPlan) selects(s Stream, at logPos) bool {
	bound, ok := p.after[s]
	return !ok || bound.before(at)
}

// tailCounter is fed a log's kept entries newest first and finds where its
// last n lines begin. The entry that ends line n+1 of a stream (counting
// all streams together) is excluded, and so is everything of that stream
// before it: it becomes the stream's bound. The count is done once every
// stream it has seen has its bound. Not safe for concurrent use.
type tailCounter struct {
	n     int64
	ends  int64
	seen  map[Stream]bool
	after map[Stream]logPos
}

func newTailCounter(n int64) *tailCounter {
	return &tailCounter{n: n, seen: map[Stream]bool{}, after: map[Stream]logPos{}}
}

// visit takes the next entry, going backwards, and reports whether the
// count is done. Only a line's last entry changes anything: a stream's
// newest entry, and each full entry.
func (c *tailCounter) visit(e Entry, at logPos) bool {
	s := e.Stream
	if _, ok := c.after[s]; ok {
		return c.done()
	}
	lineEnd := !c.seen[s] || !e.Partial
	c.seen[s] = true
	if !lineEnd {
		return false
	}
	if c.ends < c.n {
		c.ends++
		return false
	}
	c.after[s] = at
	return c.done()
}

func (c *tailCounter) done() bool {
	if len(c.after) == 0 {
		return false
	}
	for s := range c.seen {
		if _, ok := c.after[s]; !ok {
			return false
		}
	}
	return true
}

// plan is where the forward pass starts: the oldest bound once the count
// is done, else the beginning of the log.
func (c *tailCounter) plan() tailPlan {
	p := tailPlan{after: c.after}
	if c.done() {
		first := true
		for _, b := range c.after {
			if first || b.before(p.start) {
				p.start, first = b, false
			}
		}
	}
	return p
}

// lineEnds are the positions, oldest first, of the entries of one stream
// that can end a line in a file read forwards: at most the last max full
// entries, and the stream's newest entry. It is how a .gz file, which can
// only be read forwards, is counted backwards: replay gives the counter
// those entries newest first, and a counter needs no more than max full
// entries of a stream to get past one file (max being the lines it still
// lacks, plus one). Not safe for concurrent use.
type lineEnds struct {
	max    int64
	full   []int64
	newest int64
	// newestPartial: the newest entry is partial (so not in full).
	newestPartial bool
	any           bool
}

func (l *lineEnds) add(e Entry, off int64) {
	l.any, l.newest, l.newestPartial = true, off, e.Partial
	if e.Partial {
		return
	}
	if int64(len(l.full)) >= l.max {
		l.full = l.full[1:]
	}
	l.full = append(l.full, off)
}

// replay feeds the counter the line ends of file, newest first, until it
// is done, and reports whether it is.
func replay(c *tailCounter, file int, streams map[Stream]*lineEnds) bool {
	type event struct {
		e  Entry
		at logPos
	}
	var events []event
	for s, l := range streams {
		if !l.any {
			continue
		}
		if l.newestPartial {
			events = append(events, event{Entry{Stream: s, Partial: true}, logPos{file, l.newest}})
		}
		for _, off := range l.full {
			events = append(events, event{Entry{Stream: s}, logPos{file, off}})
		}
	}
	slices.SortFunc(events, func(a, b event) int { return -cmp.Compare(a.at.off, b.at.off) })
	for _, ev := range events {
		if c.visit(ev.e, ev.at) {
			return true
		}
	}
	return false
}

// stillNeeded is how many full entries of a stream a counter may still
// need from one file: the lines it lacks plus one, without overflow.
func (c *tailCounter) stillNeeded() int64 {
	lack := c.n - c.ends
	if lack < 0 {
		lack = 0
	}
	if lack == 1<<63-1 {
		return lack
	}
	return lack + 1
}
