package containerlogs

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// referenceTail is the tail the definition gives, computed the simple way:
// every kept entry of the whole log in memory; each stream's entries form
// lines up to a full entry (its trailing partial ones are its last line);
// the last n lines by where they end; their entries in file order.
func referenceTail(files [][]string, opts Options) string {
	var entries []Entry
	for i, lines := range files {
		raw := strings.Join(lines, "")
		last := i == len(files)-1
		for len(raw) > 0 {
			line, rest, terminated := strings.Cut(raw, "\n")
			raw = rest
			if !terminated && (strings.TrimSpace(line) == "" || opts.Follow && last) {
				break
			}
			if e, err := ParseLine([]byte(line)); err == nil && keep(e, opts) {
				entries = append(entries, e)
			}
		}
	}
	// line[i] is the line of entry i; ends are the lines' last entries.
	line := make([]int, len(entries))
	open := map[Stream]int{}
	var ends []int
	for i, e := range entries {
		l, ok := open[e.Stream]
		if !ok {
			l = len(ends)
			ends = append(ends, -1)
			open[e.Stream] = l
		}
		line[i], ends[l] = l, i
		if !e.Partial {
			delete(open, e.Stream)
		}
	}
	selected := map[int]bool{}
	byEnd := make([]int, len(entries)) // entry index -> line ending there, +1
	for l, end := range ends {
		byEnd[end] = l + 1
	}
	for i := len(entries) - 1; i >= 0 && int64(len(selected)) < opts.TailLines; i-- {
		if byEnd[i] > 0 {
			selected[byEnd[i]-1] = true
		}
	}
	var out bytes.Buffer
	w := newEntryWriter(&out, opts)
	for i, e := range entries {
		if selected[line[i]] && w.write(e) != nil {
			break
		}
	}
	return out.String()
}

// randomLog makes a log of 1 to 4 files with both streams, partial and
// full entries, old-format and unparsable lines, lines longer than a
// block, unterminated last lines and gzipped rotated files.
func randomLog(r *rand.Rand) [][]string {
	files := make([][]string, 1+r.IntN(4))
	sec := 0
	for i := range files {
		for range r.IntN(12) {
			stream := []string{"stdout", "stderr"}[r.IntN(2)]
			content := fmt.Sprintf("s%d", sec)
			if r.IntN(15) == 0 {
				content += strings.Repeat("L", blockSize+r.IntN(blockSize))
			}
			var line string
			switch r.IntN(12) {
			case 0:
				line = "garbage line\n"
			case 1:
				line = t0.Add(time.Duration(sec)*time.Second).Format(time.RFC3339Nano) + " " + stream + " " + content + "\n"
			default:
				line = logLine(sec, stream, []string{"P", "F", "F"}[r.IntN(3)], content)
			}
			files[i] = append(files[i], line)
			sec++
		}
		if n := len(files[i]); n > 0 && r.IntN(4) == 0 {
			files[i][n-1] = strings.TrimSuffix(files[i][n-1], "\n")
		}
		if i < len(files)-1 && r.IntN(2) == 0 {
			files[i] = append(files[i], "gz")
		}
	}
	return files
}

// TestReadTailMatchesReference compares Read with referenceTail on random
// logs and options.
func TestReadTailMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 4))
	for i := range 400 {
		files := randomLog(r)
		opts := Options{TailLines: []int64{0, 1, 2, 3, 5, 8, 1000}[r.IntN(7)], Timestamps: r.IntN(3) == 0, Follow: r.IntN(4) == 0}
		if r.IntN(4) == 0 {
			opts.Since = t0.Add(time.Duration(r.IntN(20)) * time.Second)
		}
		if r.IntN(4) == 0 {
			opts.Stream = []Stream{Stdout, Stderr}[r.IntN(2)]
		}
		if r.IntN(6) == 0 {
			opts.LimitBytes = int64(1 + r.IntN(40))
		}
		plain := make([][]string, len(files))
		for j, f := range files {
			plain[j] = f
			if n := len(f); n > 0 && f[n-1] == "gz" {
				plain[j] = f[:n-1]
			}
		}
		want := referenceTail(plain, opts)
		var out bytes.Buffer
		// A follower of a container that has exited stops at the end.
		exited := Watch{Running: func(context.Context) bool { return false }}
		if err := Read(context.Background(), writeLog(t, files), opts, &out, exited); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if diff := cmp.Diff(want, out.String()); diff != "" {
			t.Fatalf("case %d: opts %+v, files %q:\noutput (-want +got):\n%s", i, opts, files, diff)
		}
	}
}
