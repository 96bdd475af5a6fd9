package server

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/node/eviction"
)

var update = flag.Bool("update", false, "rewrite testdata/eviction.*")

// fakeReport is an EvictionReport: its fields as JSON, "observed=<b>" as
// text.
type fakeReport struct {
	Observed bool `json:"observed"`
}

func (f fakeReport) WriteText(w io.Writer) error {
	_, err := fmt.Fprintf(w, "observed=%t\n", f.Observed)
	return err
}

func TestWantsText(t *testing.T) {
	tests := []struct {
		accept []string
		want   bool
	}{
		{nil, false},
		{[]string{"*/*"}, false},
		{[]string{"application/json, */*"}, false}, // kubectl get --raw
		{[]string{"text/plain"}, true},
		{[]string{"text/plain;q=0.9, application/json"}, false},
		{[]string{"application/json;q=0.5", "text/plain"}, true},
		{[]string{"text/*, */*;q=0.1"}, true},
		{[]string{"text/plain, */*"}, false}, // equal weights: JSON
		{[]string{"text/html"}, false},
		{[]string{"text/plain;q=x, application/json;q=0.1"}, false},
	}
	for _, tt := range tests {
		if got := wantsText(tt.accept); got != tt.want {
			t.Errorf("wantsText(%q) = %t, want %t", tt.accept, got, tt.want)
		}
	}
}

// evictionFixture is a node under memory pressure: 8Gi of memory with
// 400Mi available (the hard 500Mi threshold met, the soft 1Gi one met for
// 40s of its 1m30s), disk (the image and container filesystems are the
// node's) and PIDs clear, four pods: a static (critical)
// pod, a BestEffort hog, a Burstable web server over its request and a
// Guaranteed database of higher priority.
func evictionFixture(t *testing.T) eviction.Snapshot {
	t.Helper()
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	ts, err := eviction.ParseThresholds(eviction.Settings{
		Hard: map[string]string{"memory.available": "500Mi", "nodefs.available": "10%", "nodefs.inodesFree": "5%",
			"pid.available": "1000"},
		Soft:            map[string]string{"memory.available": "1Gi"},
		SoftGracePeriod: map[string]string{"memory.available": "1m30s"},
	})
	if err != nil {
		t.Fatal(err)
	}
	ts = eviction.WithContainerFs(ts, false)
	at := metav1.NewTime(now)
	u := func(v uint64) *uint64 { return &v }
	// The image and container filesystems are the node's.
	rootFs := func() *statsapi.FsStats {
		return &statsapi.FsStats{Time: at, AvailableBytes: u(60 << 30), CapacityBytes: u(100 << 30), InodesFree: u(5_800_000), Inodes: u(6_400_000)}
	}
	sum := &statsapi.Summary{Node: statsapi.NodeStats{
		Memory:  &statsapi.MemoryStats{Time: at, AvailableBytes: u(400 << 20), WorkingSetBytes: u(8<<30 - 400<<20)},
		Fs:      rootFs(),
		Runtime: &statsapi.RuntimeStats{ImageFs: rootFs(), ContainerFs: rootFs()},
		Rlimit:  &statsapi.RlimitStats{Time: at, MaxPID: ptr.To(int64(4_194_304)), NumOfRunningProcesses: ptr.To(int64(612))},
	}}
	type fixturePod struct {
		ns, name     string
		prio         int32
		req, lim     corev1.ResourceList
		ws, disk     uint64
		procs        uint64
		staticSource bool
	}
	mem := func(v string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse(v)}
	}
	var pods []*corev1.Pod
	for _, f := range []fixturePod{
		{ns: "kube-system", name: "etcd-node-1", ws: 700 << 20, disk: 2 << 30, procs: 20, req: mem("100Mi"), staticSource: true},
		{ns: "default", name: "hog", ws: 3 << 30, disk: 50 << 20, procs: 4},
		{ns: "default", name: "web", ws: 600 << 20, disk: 300 << 20, procs: 40, req: mem("256Mi")},
		{ns: "default", name: "db", prio: 1000, ws: 1900 << 20, disk: 8 << 30, procs: 12, req: mem("2Gi"), lim: mem("2Gi")},
	} {
		uid := types.UID(f.name + "-uid")
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: f.name, UID: uid},
			Spec: corev1.PodSpec{Priority: ptr.To(f.prio), Containers: []corev1.Container{{Name: "main",
				Resources: corev1.ResourceRequirements{Requests: f.req, Limits: f.lim}}}}}
		if f.staticSource {
			p.Annotations = map[string]string{"kubernetes.io/config.source": "file"}
		}
		pods = append(pods, p)
		sum.Pods = append(sum.Pods, statsapi.PodStats{PodRef: statsapi.PodReference{Namespace: f.ns, Name: f.name, UID: string(uid)},
			Memory:       &statsapi.MemoryStats{Time: at, WorkingSetBytes: u(f.ws)},
			ProcessStats: &statsapi.ProcessStats{ProcessCount: u(f.procs)},
			Containers: []statsapi.ContainerStats{{Name: "main", Memory: &statsapi.MemoryStats{WorkingSetBytes: u(f.ws)},
				Rootfs: &statsapi.FsStats{UsedBytes: u(f.disk), InodesUsed: u(f.disk >> 20)},
				Logs:   &statsapi.FsStats{UsedBytes: u(1 << 20), InodesUsed: u(1)}}}})
	}
	obs := eviction.Observe(sum)
	soft := ts[slices.IndexFunc(ts, func(t eviction.Threshold) bool { return !t.Hard() })]
	prev := eviction.Decide(eviction.Input{Thresholds: []eviction.Threshold{soft}, Observations: obs, Now: now.Add(-40 * time.Second),
		TransitionPeriod: 5 * time.Minute}).Next
	prev.Last = nil
	d := eviction.Decide(eviction.Input{Thresholds: ts, Observations: obs, Previous: prev, TransitionPeriod: 5 * time.Minute, Now: now})
	return eviction.Snapshot{At: now, Thresholds: ts, Observations: obs, Decision: d, Pods: pods, Stats: eviction.PodStatsOf(sum),
		MaxPodGracePeriod: 30, LocalStorageCapacityIsolation: true}
}

// TestEvictionExplainerFixture serves the fixture's explanation through
// the authorized handler and holds its JSON and its text to
// testdata/eviction.json and testdata/eviction.txt (go test -update
// rewrites them; docs/eviction.md quotes them).
func TestEvictionExplainerFixture(t *testing.T) {
	snap := evictionFixture(t)
	h := testHandler(t, func(c *Config) {
		c.Eviction = func() EvictionReport { return eviction.Explain(snap) }
	})
	for _, tc := range []struct{ accept, golden, contentType string }{
		{"application/json, */*", "eviction.json", "application/json"},
		{"text/plain", "eviction.txt", "text/plain; charset=utf-8"},
	} {
		r := httptest.NewRequest(http.MethodGet, "/debug/eviction", nil)
		r.Header.Set("Authorization", "Bearer proxy")
		r.Header.Set("Accept", tc.accept)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != tc.contentType {
			t.Fatalf("Accept %s: %d %s %q, want 200 %s", tc.accept, rec.Code, rec.Header().Get("Content-Type"), rec.Body.String(), tc.contentType)
		}
		got := rec.Body.Bytes()
		if tc.golden == "eviction.json" {
			var b bytes.Buffer
			if err := json.Indent(&b, got, "", "  "); err != nil {
				t.Fatalf("answer is not JSON: %v\n%s", err, got)
			}
			got = append(b.Bytes(), '\n')
		}
		path := filepath.Join("testdata", tc.golden)
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go test -update writes it)", err)
		}
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.golden, diff)
		}
		if tc.golden == "eviction.txt" {
			checkDocQuotes(t, got)
		}
	}
}

// checkDocQuotes holds docs/eviction.md's example to the text answer
// (-update rewrites it there too).
func checkDocQuotes(t *testing.T, text []byte) {
	t.Helper()
	const begin, end = "<!-- eviction.txt begins -->\n```\n", "```\n<!-- eviction.txt ends -->"
	path := filepath.Join("..", "..", "..", "docs", "eviction.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i, j := bytes.Index(doc, []byte(begin)), bytes.Index(doc, []byte(end))
	if i < 0 || j < i {
		t.Fatalf("%s has no %q ... %q block", path, begin, end)
	}
	quoted := doc[i+len(begin) : j]
	if *update {
		doc = slices.Concat(doc[:i+len(begin)], text, doc[j:])
		if err := os.WriteFile(path, doc, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if diff := cmp.Diff(string(text), string(quoted)); diff != "" {
		t.Errorf("%s quotes an old answer (-answer +quoted; go test -update rewrites it):\n%s", path, diff)
	}
}

// TestEvictionNotObserved: before the manager's first pass the explainer
// says so, in both forms.
func TestEvictionNotObserved(t *testing.T) {
	h := testHandler(t, func(c *Config) {
		c.Eviction = func() EvictionReport { return eviction.NotObserved() }
	})
	for accept, want := range map[string]string{
		"":           `{"observed":false,"message":"the eviction manager has not observed the node yet"}`,
		"text/plain": "Eviction: the eviction manager has not observed the node yet.\n",
	} {
		r := httptest.NewRequest(http.MethodGet, "/debug/eviction", nil)
		r.Header.Set("Authorization", "Bearer admin")
		if accept != "" {
			r.Header.Set("Accept", accept)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if rec.Code != http.StatusOK || rec.Body.String() != want {
			t.Errorf("Accept %q: %d %q, want 200 %q", accept, rec.Code, rec.Body.String(), want)
		}
	}
}
