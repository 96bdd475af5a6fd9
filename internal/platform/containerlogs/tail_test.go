package containerlogs

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// writeBigLog writes a CRI log of at least size bytes whose lines are
// "line <i>", all on stdout, and returns the number of lines.
func writeBigLog(t testing.TB, path string, size int) int {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	pad := strings.Repeat("x", 60)
	n, written := 0, 0
	for written < size {
		k, _ := fmt.Fprintf(w, "%s stdout F line %d %s\n", t0.Format("2006-01-02T15:04:05.000000000Z07:00"), n, pad)
		written += k
		n++
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestTailMemoryBounded reads the last 10 lines of a 30 MiB log: what it
// allocates must not grow with the log.
func TestTailMemoryBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "0.log")
	n := writeBigLog(t, path, 30<<20)
	pad := strings.Repeat("x", 60)
	lastLines := func(k int) string {
		var b strings.Builder
		for i := n - k; i < n; i++ {
			fmt.Fprintf(&b, "line %d %s\n", i, pad)
		}
		return b.String()
	}
	last80 := lastLines(80)
	const limit = 4 << 20
	for _, tc := range []struct {
		name string
		read func() (string, error)
		want string
	}{
		{name: "containerLogs tailLines=10", read: func() (string, error) {
			var out bytes.Buffer
			err := Read(context.Background(), path, Options{TailLines: 10}, &out, Watch{})
			return out.String(), err
		}, want: lastLines(10)},
		{name: "termination message from the logs", read: func() (string, error) { return Tail(path, 80, 2048) },
			want: last80[len(last80)-2048:]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			got, err := tc.read()
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("output = %q, want %q", got, tc.want)
			}
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("allocated %d bytes", alloc)
			if alloc > limit {
				t.Errorf("allocated %d bytes to tail 10 lines of a %d-line log, want at most %d", alloc, n, limit)
			}
		})
	}
}

func BenchmarkReadTail(b *testing.B) {
	path := filepath.Join(b.TempDir(), "0.log")
	writeBigLog(b, path, 30<<20)
	for _, tail := range []int64{10, 1000} {
		b.Run(fmt.Sprintf("tailLines=%d", tail), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := Read(context.Background(), path, Options{TailLines: tail}, &bytes.Buffer{}, Watch{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestReadTailTable: tails across rotated and gzipped files, with lines
// longer than a block, partial lines, zero and more lines than the log has.
func TestReadTailTable(t *testing.T) {
	long := strings.Repeat("y", 3*blockSize+17)
	tests := []struct {
		name string
		// files are the log's files, oldest first; a name ending in .gz
		// is gzipped; the last is the current file.
		files [][]string
		opts  Options
		want  string
	}{
		{
			name:  "tail zero",
			files: [][]string{{logLine(0, "stdout", "F", "a")}},
			opts:  Options{TailLines: 0}, want: "",
		},
		{
			name:  "more lines than the log has",
			files: [][]string{{logLine(0, "stdout", "F", "a")}, {logLine(1, "stdout", "F", "b")}},
			opts:  Options{TailLines: 50}, want: "a\nb\n",
		},
		{
			name:  "empty current file, lines from the rotated ones",
			files: [][]string{{logLine(0, "stdout", "F", "a"), logLine(1, "stdout", "F", "b")}, {logLine(2, "stdout", "F", "c")}, {}},
			opts:  Options{TailLines: 2}, want: "b\nc\n",
		},
		{
			name: "from a gzipped file in the middle",
			files: [][]string{
				{logLine(0, "stdout", "F", "a")},
				{logLine(1, "stdout", "F", "b"), logLine(2, "stdout", "F", "c"), "gz"},
				{logLine(3, "stdout", "F", "d")},
			},
			opts: Options{TailLines: 2}, want: "c\nd\n",
		},
		{
			name: "a line longer than a block",
			files: [][]string{{
				logLine(0, "stdout", "F", "a"), logLine(1, "stdout", "F", long), logLine(2, "stdout", "F", "b"),
			}},
			opts: Options{TailLines: 2}, want: long + "\nb\n",
		},
		{
			name: "partial entries of one line across files and a block",
			files: [][]string{
				{logLine(0, "stdout", "F", "a"), logLine(1, "stdout", "P", "x"), "gz"},
				{logLine(2, "stdout", "P", long)},
				{logLine(3, "stdout", "F", "z"), logLine(4, "stderr", "F", "e")},
			},
			opts: Options{TailLines: 2}, want: "x" + long + "z\ne\n",
		},
		{
			name: "a line still being written is the last",
			files: [][]string{{
				logLine(0, "stdout", "F", "a"), logLine(1, "stderr", "F", "b"), logLine(2, "stdout", "P", "c"),
			}},
			opts: Options{TailLines: 2}, want: "b\nc",
		},
		{
			name: "an unterminated last line counts without follow",
			files: [][]string{{
				logLine(0, "stdout", "F", "a"), logLine(1, "stdout", "F", "b"), strings.TrimSuffix(logLine(2, "stdout", "F", "c"), "\n"),
			}},
			opts: Options{TailLines: 2}, want: "b\nc\n",
		},
		{
			name: "only the tail's own entries of interleaved streams",
			files: [][]string{{
				logLine(0, "stdout", "P", "o1"), logLine(1, "stderr", "F", "e1"), logLine(2, "stdout", "F", "o2"),
				logLine(3, "stderr", "P", "e2"), logLine(4, "stdout", "F", "o3"), logLine(5, "stderr", "F", "e3"),
			}},
			// Lines end o2 (2), o3 (4), e2e3 (5): the last two are o3
			// and e2e3, written in file order.
			opts: Options{TailLines: 2}, want: "e2o3\ne3\n",
		},
		{
			name:  "since and tail",
			files: [][]string{{logLine(0, "stdout", "F", "a"), logLine(1, "stdout", "F", "b"), logLine(2, "stdout", "F", "c")}},
			opts:  Options{TailLines: 5, Since: t0.Add(time.Second)}, want: "b\nc\n",
		},
		{
			name:  "unparsable lines do not count",
			files: [][]string{{logLine(0, "stdout", "F", "a"), "junk\n", "\n", logLine(1, "stdout", "F", "b"), "more junk\n"}},
			opts:  Options{TailLines: 2}, want: "a\nb\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeLog(t, tc.files)
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

// writeLog writes a log's files, oldest first, and returns the current
// file's path. A file whose last element is "gz" is gzipped.
func writeLog(t *testing.T, files [][]string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "0.log")
	for i, lines := range files {
		name := path
		if i < len(files)-1 {
			name = fmt.Sprintf("%s.20261122-1000%02d", path, i)
		}
		if n := len(lines); n > 0 && lines[n-1] == "gz" {
			writeGzip(t, name+".gz", lines[:n-1]...)
			continue
		}
		writeFile(t, name, lines...)
	}
	return path
}
