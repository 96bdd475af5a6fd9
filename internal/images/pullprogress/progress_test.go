package pullprogress

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/berthk8s/berth/internal/platform/contentstore"
	"github.com/berthk8s/berth/internal/platform/cri"
)

// fakeStore is an in-memory content store: committed blobs with their
// labels and contents, and ingests. Safe for concurrent use.
type fakeStore struct {
	mu      sync.Mutex
	blobs   map[string]contentstore.Blob
	data    map[string][]byte
	ingests []contentstore.Ingest
	err     error
	reads   int
}

func newFakeStore() *fakeStore {
	return &fakeStore{blobs: map[string]contentstore.Blob{}, data: map[string][]byte{}}
}

func (f *fakeStore) commit(digest string, size int64, created time.Time, labels map[string]string, data []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.blobs[digest] = contentstore.Blob{Digest: digest, Size: size, Created: created, Labels: labels}
	f.data[digest] = data
}

func (f *fakeStore) setIngests(in ...contentstore.Ingest) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ingests = in
}

func (f *fakeStore) Ingests(context.Context) ([]contentstore.Ingest, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]contentstore.Ingest(nil), f.ingests...), f.err
}

func (f *fakeStore) Labeled(_ context.Context, key string) ([]contentstore.Blob, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []contentstore.Blob
	for _, b := range f.blobs {
		if _, ok := b.Labels[key]; ok {
			out = append(out, b)
		}
	}
	return out, f.err
}

func (f *fakeStore) Info(_ context.Context, digest string) (contentstore.Blob, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, ok := f.blobs[digest]
	return b, ok, f.err
}

func (f *fakeStore) Read(_ context.Context, digest string, limit int64) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	d, ok := f.data[digest]
	if !ok || int64(len(d)) > limit {
		return nil, fmt.Errorf("read %s: %w", digest, cri.ErrNotFound)
	}
	return d, nil
}

var t0 = time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)

// host is the registry of the pulls; labeled is how the distribution
// source label names it, without the port.
const (
	host    = "127.0.0.1:5000"
	labeled = "127.0.0.1"
)

func source(repo string) map[string]string {
	return map[string]string{sourceLabel + labeled: repo, childLabel + "config": "x"}
}

// image is an image manifest of a config (100 bytes) and three layers.
func image(t *testing.T, name string) ([]byte, []blobRef) {
	t.Helper()
	blobs := []blobRef{{"sha256:" + name + "c", 100}, {"sha256:" + name + "1", 1000}, {"sha256:" + name + "2", 2000}, {"sha256:" + name + "3", 4000}}
	b, err := json.Marshal(map[string]any{"schemaVersion": 2, "config": blobs[0], "layers": blobs[1:]})
	if err != nil {
		t.Fatal(err)
	}
	return b, blobs
}

func TestSample(t *testing.T) {
	ctx := context.Background()
	m, blobs := image(t, "a")
	other, _ := image(t, "b")
	index := []byte(`{"schemaVersion":2,"manifests":[{"digest":"sha256:am","size":1}]}`)
	tests := []struct {
		name    string
		setup   func(s *fakeStore)
		want    Progress
		wantErr bool
	}{{
		name: "manifest not fetched yet",
		setup: func(s *fakeStore) {
			s.setIngests(contentstore.Ingest{Ref: "manifest-sha256:am", Offset: 10})
		},
	}, {
		name: "config and a layer committed, one downloading, one not started",
		setup: func(s *fakeStore) {
			s.commit("sha256:ai", int64(len(index)), t0.Add(time.Second), source("app"), index)
			s.commit("sha256:am", int64(len(m)), t0.Add(time.Second), source("app"), m)
			s.commit(blobs[0].Digest, 100, t0.Add(2*time.Second), map[string]string{sourceLabel + labeled: "app"}, nil)
			s.commit(blobs[1].Digest, 1000, t0.Add(2*time.Second), map[string]string{sourceLabel + labeled: "app"}, nil)
			s.setIngests(contentstore.Ingest{Ref: "layer-" + blobs[2].Digest, Offset: 500, Total: 2000})
		},
		want: Progress{Known: true, Done: 1600, Total: 7100, Blobs: 4, BlobsDone: 2},
	}, {
		name: "a manifest of another repository is not the pull's",
		setup: func(s *fakeStore) {
			s.commit("sha256:bm", int64(len(other)), t0.Add(time.Second), source("other"), other)
		},
	}, {
		name: "a manifest older than the pull, nothing of it downloading",
		setup: func(s *fakeStore) {
			s.commit("sha256:am", int64(len(m)), t0.Add(-time.Hour), source("app"), m)
		},
	}, {
		name: "an older manifest with a layer downloading: a pull resumed",
		setup: func(s *fakeStore) {
			s.commit("sha256:am", int64(len(m)), t0.Add(-time.Hour), source("app,other"), m)
			s.commit(blobs[3].Digest, 4000, t0.Add(-time.Hour), map[string]string{sourceLabel + labeled: "app"}, nil)
			s.setIngests(contentstore.Ingest{Ref: "layer-" + blobs[1].Digest, Offset: 2000, Total: 1000})
		},
		want: Progress{Known: true, Done: 5000, Total: 7100, Blobs: 4, BlobsDone: 1},
	}, {
		name: "the store fails",
		setup: func(s *fakeStore) {
			s.err = cri.ErrUnavailable
		},
		wantErr: true,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newFakeStore()
			tc.setup(s)
			p := newPull(host+"/app", t0)
			got, err := p.sample(ctx, s, t0.Add(3*time.Second))
			if (err != nil) != tc.wantErr {
				t.Fatalf("sample: err %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("progress (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSampleRising follows one pull: the rate is the last interval's
// averaged with the one before, and a candidate once read is not read
// again.
func TestSampleRising(t *testing.T) {
	ctx := context.Background()
	s := newFakeStore()
	m, blobs := image(t, "a")
	s.commit("sha256:old", 10, t0.Add(-time.Hour), source("app"), []byte(`not json`))
	p := newPull(host+"/app", t0)
	if got, err := p.sample(ctx, s, t0.Add(time.Second)); err != nil || got.Known {
		t.Fatalf("before the manifest: %+v, %v", got, err)
	}
	s.commit("sha256:am", int64(len(m)), t0.Add(time.Second), source("app"), m)
	s.setIngests(contentstore.Ingest{Ref: "config-" + blobs[0].Digest, Offset: 100})
	first, err := p.sample(ctx, s, t0.Add(2*time.Second))
	if err != nil || first.Done != 100 || first.BytesPerSecond != 0 {
		t.Fatalf("first reading: %+v, %v; want 100 bytes done, no rate yet", first, err)
	}
	s.commit(blobs[0].Digest, 100, t0.Add(2*time.Second), nil, nil)
	s.setIngests(contentstore.Ingest{Ref: "layer-" + blobs[1].Digest, Offset: 300})
	second, err := p.sample(ctx, s, t0.Add(3*time.Second))
	if err != nil || second.Done != 400 || second.BytesPerSecond != 300 || second.BlobsDone != 1 {
		t.Fatalf("second reading: %+v, %v; want 400 bytes done at 300 B/s, 1 blob done", second, err)
	}
	s.setIngests(contentstore.Ingest{Ref: "layer-" + blobs[1].Digest, Offset: 400})
	if third, err := p.sample(ctx, s, t0.Add(4*time.Second)); err != nil || third.BytesPerSecond != (100+300)/2 {
		t.Fatalf("third reading: %+v, %v; want 200 B/s, the mean of the last two intervals'", third, err)
	}
	if s.reads != 2 {
		t.Errorf("reads = %d, want 2 (the old candidate and the manifest, each once)", s.reads)
	}
}

func TestWatch(t *testing.T) {
	ctx := context.Background()
	clk := testingclock.NewFakeClock(t0)
	s := newFakeStore()
	m, blobs := image(t, "a")
	s.commit("sha256:am", int64(len(m)), t0, source("app"), m)
	w, err := New(Config{Store: s, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan Progress, 10)
	stop := w.Watch(ctx, host+"/app", t0, func(p Progress) { got <- p })
	tick := func() {
		t.Helper()
		for !clk.HasWaiters() {
			time.Sleep(time.Millisecond)
		}
		clk.Step(DefaultInterval)
	}
	s.setIngests(contentstore.Ingest{Ref: "layer-" + blobs[1].Digest, Offset: 10})
	tick()
	if p := <-got; p.Done != 10 || p.Total != 7100 {
		t.Fatalf("first report %+v", p)
	}
	tick() // the same reading: no report
	s.setIngests(contentstore.Ingest{Ref: "layer-" + blobs[1].Digest, Offset: 20})
	tick()
	if p := <-got; p.Done != 20 {
		t.Fatalf("second report %+v, want 20 bytes done", p)
	}
	stop()
	select {
	case p := <-got:
		t.Fatalf("report after stop: %+v", p)
	default:
	}

	s.err = fmt.Errorf("list: %w", cri.ErrUnimplemented)
	stop = w.Watch(ctx, host+"/app", t0, func(Progress) {})
	for !w.unsupported.Load() { // the stopped watch's ticker may be the waiter
		clk.Step(DefaultInterval)
		time.Sleep(time.Millisecond)
	}
	stop()
	w.Watch(ctx, host+"/app", t0, func(Progress) { t.Error("a runtime without the API is asked again") })()
}

func TestLabelHost(t *testing.T) {
	for in, want := range map[string]string{"docker.io": "docker.io", "127.0.0.1:5000": "127.0.0.1", "[::1]:5000": "::1", "registry.example:443": "registry.example"} {
		if got := labelHost(in); got != want {
			t.Errorf("labelHost(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestString(t *testing.T) {
	for _, tc := range []struct {
		p    Progress
		want string
	}{
		{Progress{}, "progress not known yet"},
		{Progress{Known: true, Done: 512, Total: 1000, BytesPerSecond: 100}, "512 B of 1000 B (51%), 100 B/s"},
		{Progress{Known: true, Done: 12 << 20, Total: 40 << 20, BytesPerSecond: 2.5 * (1 << 20)}, "12.0 MiB of 40.0 MiB (30%), 2.5 MiB/s"},
	} {
		if got := tc.p.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.p, got, tc.want)
		}
	}
}
