package bench

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// heapTop is how many functions a heap point lists.
const heapTop = 15

// heapLimit bounds one heap profile read from a kubelet.
const heapLimit = 256 << 20

// HeapPoint is berth's heap at one pod count in one configuration: the
// Go runtime's HeapInuse, the profile's file (for `go tool pprof`), and
// the functions that allocated the most bytes still in use.
type HeapPoint struct {
	Config   string      `json:"config"`
	Pods     int         `json:"pods"`
	File     string      `json:"file"`
	InuseMiB float64     `json:"inuse_mib"`
	Top      []HeapEntry `json:"top"`
}

// HeapEntry is one function's in-use bytes (flat: allocated there itself),
// estimated from the sampled profile as `go tool pprof` does.
type HeapEntry struct {
	Func  string  `json:"func"`
	Bytes float64 `json:"bytes"`
}

// HeapProfile is what parseHeapText reads from a legacy text heap profile.
type HeapProfile struct {
	HeapInuse uint64 // runtime.MemStats.HeapInuse, bytes
	Top       []HeapEntry
}

// parseHeapText reads a heap profile in the text form /debug/pprof/heap
// serves with debug=1 (net/http/pprof, runtime/pprof's legacy format):
// a header with twice the sampling rate, records "inuse_objects:
// inuse_bytes [alloc_objects: alloc_bytes] @ stack" each followed by its
// symbolized frames ("#\t0xaddr\tfunc+0xoff\tfile:line", leaf first), then
// the runtime.MemStats lines. It returns the top functions by in-use bytes
// at their leaf frame, unsampled as runtime/pprof's scaleHeapSample does.
// It is pure.
func parseHeapText(r io.Reader, top int) (HeapProfile, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var (
		p          HeapProfile
		rate       float64
		pending    float64 // the current record's scaled in-use bytes
		inRecord   bool
		byFunc     = map[string]float64{}
		headerSeen bool
	)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "heap profile:"):
			i := strings.LastIndex(line, "@ heap/")
			if i < 0 {
				return HeapProfile{}, fmt.Errorf("heap profile header %q: no sampling rate", line)
			}
			r2, err := strconv.ParseFloat(line[i+len("@ heap/"):], 64)
			if err != nil {
				return HeapProfile{}, fmt.Errorf("heap profile header %q: %w", line, err)
			}
			rate, headerSeen = r2/2, true
		case strings.HasPrefix(line, "# HeapInuse = "):
			v, err := strconv.ParseUint(strings.TrimPrefix(line, "# HeapInuse = "), 10, 64)
			if err != nil {
				return HeapProfile{}, fmt.Errorf("heap profile %q: %w", line, err)
			}
			p.HeapInuse = v
		case strings.HasPrefix(line, "#\t"):
			if !inRecord {
				continue
			}
			f := strings.Split(line, "\t")
			if len(f) >= 3 {
				fn := f[2]
				if i := strings.LastIndex(fn, "+0x"); i > 0 {
					fn = fn[:i]
				}
				byFunc[fn] += pending
			}
			inRecord = false // the leaf frame only
		case headerSeen && strings.Contains(line, " @ "):
			objs, bytes, ok := recordInuse(line)
			if !ok {
				return HeapProfile{}, fmt.Errorf("heap profile record %q: not \"n: bytes [n: bytes] @ stack\"", line)
			}
			pending, inRecord = scaleHeap(objs, bytes, rate), bytes > 0
		}
	}
	if err := sc.Err(); err != nil {
		return HeapProfile{}, fmt.Errorf("read heap profile: %w", err)
	}
	if !headerSeen {
		return HeapProfile{}, fmt.Errorf("not a text heap profile: no \"heap profile:\" header")
	}
	for fn, b := range byFunc {
		p.Top = append(p.Top, HeapEntry{Func: fn, Bytes: b})
	}
	slices.SortFunc(p.Top, func(a, b HeapEntry) int {
		return cmp.Or(cmp.Compare(b.Bytes, a.Bytes), strings.Compare(a.Func, b.Func))
	})
	if len(p.Top) > top {
		p.Top = p.Top[:top]
	}
	return p, nil
}

// recordInuse reads the in-use objects and bytes of a record line.
func recordInuse(line string) (objs, bytes float64, ok bool) {
	head, _, _ := strings.Cut(line, " [")
	o, b, found := strings.Cut(head, ": ")
	if !found {
		return 0, 0, false
	}
	objs, err1 := strconv.ParseFloat(strings.TrimSpace(o), 64)
	bytes, err2 := strconv.ParseFloat(strings.TrimSpace(b), 64)
	return objs, bytes, err1 == nil && err2 == nil
}

// scaleHeap estimates the bytes that a sample of objs objects of bytes in
// all stands for at sampling rate rate (runtime/pprof's scaleHeapSample).
func scaleHeap(objs, bytes, rate float64) float64 {
	if objs == 0 || bytes == 0 {
		return 0
	}
	if rate <= 1 {
		return bytes
	}
	return bytes / (1 - math.Exp(-bytes/objs/rate))
}

// heap fetches berth's heap profile on its kubelet API at pods pods:
// the binary profile into dir, and the text one for the report. A failure
// is logged: it costs the point, not the run.
func (r *runner) heap(ctx context.Context, dir string, pods int) {
	if err := r.fetchHeap(ctx, dir, pods); err != nil {
		r.cfg.Logf("%s: no heap profile at %d pods: %v", r.conf, pods, err)
	}
}

func (r *runner) fetchHeap(ctx context.Context, dir string, pods int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("make heap profile directory: %w", err)
	}
	file := filepath.Join(dir, fmt.Sprintf("heap-%s-%d.pb.gz", r.conf, pods))
	if err := r.kubeletGet(ctx, "/debug/pprof/heap", func(body io.Reader) error {
		f, err := os.Create(file)
		if err != nil {
			return err
		}
		_, err = io.Copy(f, io.LimitReader(body, heapLimit))
		return cmp.Or(err, f.Close())
	}); err != nil {
		return fmt.Errorf("fetch heap profile at %d pods: %w", pods, err)
	}
	var p HeapProfile
	if err := r.kubeletGet(ctx, "/debug/pprof/heap?debug=1", func(body io.Reader) (err error) {
		p, err = parseHeapText(io.LimitReader(body, heapLimit), heapTop)
		return err
	}); err != nil {
		return fmt.Errorf("fetch heap profile at %d pods: %w", pods, err)
	}
	mib := float64(p.HeapInuse) / (1 << 20)
	r.heaps = append(r.heaps, HeapPoint{Config: r.conf, Pods: pods, File: file, InuseMiB: mib, Top: p.Top})
	r.samples.Add(fmt.Sprintf("heap_inuse_%d", pods), ColBerth, mib)
	r.cfg.Logf("%s: berth's heap in use at %d pods: %.1f MiB (%s)", r.conf, pods, mib, file)
	return nil
}

// kubeletGet reads path on the kubelet API of this machine as the bench's
// client (see connect) and hands a 200 answer's body to read.
func (r *runner) kubeletGet(ctx context.Context, path string, read func(io.Reader) error) error {
	ctx, cancel := context.WithTimeout(ctx, scrapeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, kubeletURL(r.cfg.NodeIP, path), nil)
	if err != nil {
		return err
	}
	resp, err := r.kubeletAPI.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	return read(resp.Body)
}
