package containerlogs

import (
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"
)

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// logLine formats a CRI log line written sec seconds after t0.
func logLine(sec int, stream, tag, content string) string {
	return t0.Add(time.Duration(sec)*time.Second).Format(time.RFC3339Nano) + " " + stream + " " + tag + " " + content + "\n"
}

func writeFile(t *testing.T, path string, lines ...string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o600); err != nil {
		t.Fatal(err)
	}
}

func appendFile(t *testing.T, path string, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(strings.Join(lines, "")); err != nil {
		t.Fatal(err)
	}
}

func writeGzip(t *testing.T, path string, lines ...string) {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	if _, err := gz.Write([]byte(strings.Join(lines, ""))); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestReadOnce(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "0.log")
	writeGzip(t, path+".20261122-100000.gz", logLine(0, "stdout", "F", "one"))
	writeFile(t, path+".20261122-100005", logLine(1, "stdout", "F", "two"), logLine(2, "stderr", "P", "thr"))
	writeFile(t, path,
		logLine(3, "stderr", "F", "ee"),
		logLine(4, "stdout", "P", "fo"),
		logLine(5, "stdout", "F", "ur"),
		logLine(6, "stderr", "F", "five"),
		"garbage line\n",
		logLine(7, "stdout", "F", "six"),
	)
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{name: "everything, rotated first", opts: Options{TailLines: -1}, want: "one\ntwo\nthree\nfour\nfive\nsix\n"},
		{name: "tail joins partial lines", opts: Options{TailLines: 3}, want: "four\nfive\nsix\n"},
		{name: "tail spans rotated files", opts: Options{TailLines: 5}, want: "two\nthree\nfour\nfive\nsix\n"},
		{name: "tail zero", opts: Options{TailLines: 0}, want: ""},
		{name: "tail more than there is", opts: Options{TailLines: 100}, want: "one\ntwo\nthree\nfour\nfive\nsix\n"},
		{name: "since", opts: Options{TailLines: -1, Since: t0.Add(5 * time.Second)}, want: "ur\nfive\nsix\n"},
		{name: "stdout only", opts: Options{TailLines: -1, Stream: Stdout}, want: "one\ntwo\nfour\nsix\n"},
		{name: "stderr only", opts: Options{TailLines: -1, Stream: Stderr}, want: "three\nfive\n"},
		{name: "limit bytes", opts: Options{TailLines: -1, LimitBytes: 6}, want: "one\ntw"},
		{name: "timestamps once per line", opts: Options{TailLines: 2, Timestamps: true},
			want: "2026-11-22T10:00:06Z five\n2026-11-22T10:00:07Z six\n"},
		{name: "timestamps on joined line", opts: Options{TailLines: 3, Timestamps: true, LimitBytes: 26},
			want: "2026-11-22T10:00:04Z four\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := Read(context.Background(), path, tc.opts, &out, Watch{}); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, out.String()); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadMissingFile(t *testing.T) {
	err := Read(context.Background(), filepath.Join(t.TempDir(), "0.log"), Options{TailLines: -1}, &bytes.Buffer{}, Watch{})
	if err == nil {
		t.Fatal("want an error for a missing log file")
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader goroutine.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitWaiting blocks until Read waits on the fake clock.
func waitWaiting(t *testing.T, clk *clocktesting.FakeClock) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !clk.HasWaiters() {
		if time.Now().After(deadline) {
			t.Fatal("reader never waited on the clock")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestFollowAcrossRotationUntilExit(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "0.log")
	writeFile(t, path, logLine(0, "stdout", "F", "old"), logLine(1, "stdout", "F", "last"))
	clk := clocktesting.NewFakeClock(t0)
	var running atomic.Bool
	running.Store(true)
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- Read(context.Background(), path, Options{Follow: true, TailLines: 1}, out,
			Watch{Clock: clk, Poll: time.Second, Running: func(context.Context) bool { return running.Load() }})
	}()

	waitWaiting(t, clk)
	if got := out.String(); got != "last\n" {
		t.Fatalf("backlog = %q, want the tail line", got)
	}
	appendFile(t, path, logLine(2, "stdout", "P", "gr"), logLine(3, "stdout", "F", "own"))
	clk.Step(time.Second)
	waitWaiting(t, clk)
	// Rotate: the old file moves away with a last line, a new one appears.
	appendFile(t, path, logLine(4, "stderr", "F", "before rotation"))
	if err := os.Rename(path, path+".20261122-100005"); err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, logLine(5, "stdout", "F", "after rotation"))
	clk.Step(time.Second)
	waitWaiting(t, clk)
	appendFile(t, path, logLine(6, "stdout", "F", "final words"))
	running.Store(false)
	clk.Step(time.Second)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	want := "last\ngrown\nbefore rotation\nafter rotation\nfinal words\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}

func TestFollowStopsWhenContextEnds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "0.log")
	writeFile(t, path, logLine(0, "stdout", "F", "x"))
	clk := clocktesting.NewFakeClock(t0)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Read(ctx, path, Options{Follow: true, TailLines: -1}, &syncBuffer{},
			Watch{Clock: clk, Poll: time.Second, Running: func(context.Context) bool { return true }})
	}()
	waitWaiting(t, clk)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "0.log")
	writeFile(t, path,
		logLine(0, "stdout", "F", "a"),
		logLine(1, "stderr", "P", "bb"),
		logLine(2, "stderr", "F", "b"),
		logLine(3, "stdout", "F", "c"),
	)
	tests := []struct {
		name     string
		lines    int
		maxBytes int64
		want     string
	}{
		{name: "all lines", lines: 80, want: "a\nbbb\nc\n"},
		{name: "last two lines, partial joined", lines: 2, want: "bbb\nc\n"},
		{name: "bytes cut from the front", lines: 80, maxBytes: 4, want: "b\nc\n"},
		{name: "no lines", lines: 0, want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Tail(path, tc.lines, tc.maxBytes)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("Tail = %q, want %q", got, tc.want)
			}
		})
	}
	if _, err := Tail(path+".missing", 1, 1); err == nil {
		t.Error("want an error for a missing file")
	}
}

// TestTailIsWhatThePlanCounted: lines the container writes after the tail
// was planned are not part of a tail that does not follow (the e2e
// TestClusterLogRotation saw --tail=1 give two lines of a busy log).
func TestTailIsWhatThePlanCounted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "0.log")
	writeFile(t, path, logLine(1, "stdout", "F", "one"), logLine(2, "stdout", "F", "two"))
	cur, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close()
	files := newLogFiles(nil, path, cur)
	opts := Options{TailLines: 1}
	lr, plan, err := startBacklog(files, opts)
	if err != nil {
		t.Fatal(err)
	}
	appendFile(t, path, logLine(3, "stdout", "F", "three")) // written meanwhile
	var out bytes.Buffer
	if err := writeBacklog(context.Background(), files, lr, plan, false, newEntryWriter(&out, opts)); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "two\n" {
		t.Errorf("tail of 1 = %q, want the line counted (\"two\\n\")", got)
	}
}
