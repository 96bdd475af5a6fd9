package containerlogs

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// blockSize is how much of a file the backward scan reads at once.
const blockSize = 32 << 10

// backScanner gives the raw lines of a file newest first: where each
// starts, and its first headerBytes bytes. It holds one block of the file
// and reads each byte at most once, however long the lines, as upstream's
// findTailLineStartIndex does. Not safe for concurrent use.
type backScanner struct {
	r io.ReaderAt
	// block holds the file's bytes from blockAt on.
	block   []byte
	blockAt int64
	buf     []byte
	head    []byte
	// end is where the next line given ends (exclusive).
	end int64
	// unterminated: the file's last line has no newline yet.
	unterminated bool
}

// newBackScanner scans the first size bytes of r.
func newBackScanner(r io.ReaderAt, size int64) (*backScanner, error) {
	s := &backScanner{r: r, buf: make([]byte, blockSize), head: make([]byte, headerBytes), end: size}
	if size > 0 {
		if err := s.load(size); err != nil {
			return nil, err
		}
		s.unterminated = s.block[len(s.block)-1] != '\n'
	}
	return s, nil
}

// prev returns the start and the head of the line before the last one it
// returned (the file's last line first); ok is false at the file's start.
// The head is valid until the next call.
func (s *backScanner) prev() (start int64, head []byte, ok bool, err error) {
	if s.end <= 0 {
		return 0, nil, false, nil
	}
	end := s.end
	nl, err := s.lastNewline(end - 1)
	if err != nil {
		return 0, nil, false, err
	}
	start = nl + 1
	s.end = start
	n := min(end-start, headerBytes)
	if start >= s.blockAt && start+n <= s.blockAt+int64(len(s.block)) {
		return start, s.block[start-s.blockAt : start-s.blockAt+n], true, nil
	}
	if err := s.readAt(s.head[:n], start); err != nil {
		return 0, nil, false, err
	}
	return start, s.head[:n], true, nil
}

// lastNewline returns the offset of the last newline before limit, or -1.
func (s *backScanner) lastNewline(limit int64) (int64, error) {
	for limit > 0 {
		if limit <= s.blockAt || limit > s.blockAt+int64(len(s.block)) {
			if err := s.load(limit); err != nil {
				return 0, err
			}
		}
		if i := bytes.LastIndexByte(s.block[:limit-s.blockAt], '\n'); i >= 0 {
			return s.blockAt + int64(i), nil
		}
		limit = s.blockAt
	}
	return -1, nil
}

// load reads the block that ends at limit.
func (s *backScanner) load(limit int64) error {
	at := max(0, limit-blockSize)
	if err := s.readAt(s.buf[:limit-at], at); err != nil {
		return err
	}
	s.block, s.blockAt = s.buf[:limit-at], at
	return nil
}

func (s *backScanner) readAt(p []byte, off int64) error {
	n, err := s.r.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF // the file shrank
	}
	return fmt.Errorf("read log at offset %d: %w", off, err)
}

// headReader reads the raw lines of a stream forwards, keeping only each
// line's first headerBytes bytes, so a line longer than its buffer costs
// no memory. Not safe for concurrent use.
type headReader struct {
	r    *bufio.Reader
	head []byte
}

func newHeadReader(r io.Reader) *headReader {
	return &headReader{r: bufio.NewReaderSize(r, blockSize), head: make([]byte, 0, headerBytes)}
}

// next returns the head of the next line and its length with the newline;
// n is 0 at the end. The head is valid until the next call.
func (h *headReader) next() (head []byte, n int64, err error) {
	h.head = h.head[:0]
	for {
		chunk, err := h.r.ReadSlice('\n')
		if room := headerBytes - len(h.head); room > 0 {
			h.head = append(h.head, chunk[:min(room, len(chunk))]...)
		}
		n += int64(len(chunk))
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			return h.head, n, nil
		case err != nil:
			return nil, 0, fmt.Errorf("read log: %w", err)
		}
		return h.head, n, nil
	}
}
