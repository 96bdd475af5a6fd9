package upstreamsrc

import (
	"fmt"
	"go/ast"
	"go/token"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeSource is a Source whose module k8s.io/fake is testdata/fake.
func fakeSource(t testing.TB) *Source {
	dir, err := filepath.Abs(filepath.Join("testdata", "fake"))
	if err != nil {
		t.Fatal(err)
	}
	return &Source{t: t, fset: token.NewFileSet(), mods: map[string]module{"k8s.io/fake": {version: "v0.0.0", dir: dir}}, pkgs: map[string][]*file{}}
}

func TestValues(t *testing.T) {
	s := fakeSource(t)
	const a = "k8s.io/fake/pkg/a"
	type entry struct{ Name, Kernel string }
	var entries []entry
	for _, e := range s.Value(a, "entries").Elems() {
		f := e.Fields()
		got := entry{Name: f["name"].AsString()}
		if k, ok := f["kernel"]; ok {
			got.Kernel = k.AsString()
		}
		entries = append(entries, got)
	}
	gen := s.Value(a, "generated")
	labels := s.Func(a, "labels").CompositeLits()[0]
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"struct fields, local and imported constants", entries, []entry{{"plain", ""}, {"local", "4.15"}}},
		{"errors.New", s.Value(a, "ErrReason").AsString(), "SomeReason"},
		{"map of the Linux file, not the Windows one", s.Value(a, "table").AsStringMap(), map[string]string{"k": "4.15"}},
		{"list inside a function literal", gen.CompositeLits()[0].AsStrings(), []string{"/a", "/b"}},
		{"format of a call", gen.Calls("fmt", "Sprintf")[0].Arg(0).AsString(), "/cpu%d/x"},
		{"package named unlike its directory", labels.AsStrings(), []string{"example.io/label", "x"}},
		{"integers", []int64{
			s.Value("k8s.io/fake/pkg/consts", "Critical").AsInt(),
			s.Value("k8s.io/fake/pkg/consts", "Body").AsInt(),
			s.Value("k8s.io/fake/pkg/consts", "Negative").AsInt(),
		}, []int64{2000000000, 10240, -999}},
		{"floats", s.Value("k8s.io/fake/pkg/consts", "Buckets").AsFloats(), []float64{0.5, 1, -2500}},
		{"durations", []time.Duration{
			s.Value("k8s.io/fake/pkg/consts", "Retry").AsDuration(),
			s.Value("k8s.io/fake/pkg/consts", "Purge").AsDuration(),
			s.Value("k8s.io/fake/pkg/consts", "Poll").AsDuration(),
			s.Value("k8s.io/fake/pkg/consts", "Twice").AsDuration(),
			s.Value("k8s.io/fake/pkg/consts", "Interval").AsDuration(),
			s.Value("k8s.io/fake/pkg/consts", "Offset").AsDuration(),
		}, []time.Duration{3 * time.Minute, 15 * time.Minute, 2 * time.Second, 6 * time.Minute, 500 * time.Millisecond, 122 * time.Second}},
		{"Linux files, tests left out", fileNames(s.Files(a)), []string{"a.go", "b.go"}},
		{"calls by any matcher", len(s.Files(a)[0].CallsTo(func(x, f string) bool { return f == "Sprintf" || f == "New" })), 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// recorder is a testing.TB that notes how the code under test ended it.
type recorder struct {
	testing.TB
	ended string // "fatal", "skip" or ""
	msg   string
}

func (r *recorder) Helper()                           {}
func (r *recorder) Fatal(args ...any)                 { r.end("fatal", fmt.Sprint(args...)) }
func (r *recorder) Fatalf(format string, args ...any) { r.end("fatal", fmt.Sprintf(format, args...)) }
func (r *recorder) Skip(args ...any)                  { r.end("skip", fmt.Sprint(args...)) }

func (r *recorder) end(how, msg string) {
	r.ended, r.msg = how, msg
	runtime.Goexit()
}

// run calls f with r as its TB, on a goroutine it may end.
func (r *recorder) run(f func(testing.TB)) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
}

func TestShapeMismatchFails(t *testing.T) {
	r := &recorder{TB: t}
	r.run(func(tb testing.TB) {
		s := fakeSource(tb)
		s.Value("k8s.io/fake/pkg/a", "table").AsStrings()
	})
	if r.ended != "fatal" || !strings.Contains(r.msg, "a.go") {
		t.Errorf("a map read as a list: ended %q with %q, want a fatal naming the file", r.ended, r.msg)
	}
}

func TestMissingModule(t *testing.T) {
	for _, tt := range []struct {
		name, ci, e2e, want string
	}{
		{"locally it skips", "", "", "skip"},
		{"in CI it fails", "true", "", "fatal"},
		{"in make test it fails", "", "1", "fatal"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("CI", tt.ci)
			t.Setenv("BERTH_E2E", tt.e2e)
			t.Setenv("GOMODCACHE", t.TempDir()) // a machine that never downloaded it
			r := &recorder{TB: t}
			r.run(func(tb testing.TB) {
				s := New(tb)
				s.ModuleDir("k8s.io/kubernetes")
			})
			if r.ended != tt.want {
				t.Fatalf("ended %q (%s), want %q", r.ended, r.msg, tt.want)
			}
			if !strings.Contains(r.msg, "cd tools/kube && go mod download k8s.io/kubernetes") {
				t.Errorf("message %q does not say how to fetch the module", r.msg)
			}
		})
	}
}

// TestKubernetes reads the real upstream: the module tools/kube pins.
func TestKubernetes(t *testing.T) {
	s := New(t)
	dir := s.ModuleDir("k8s.io/kubernetes")
	if _, err := os.Stat(filepath.Join(dir, "pkg", "kubelet")); err != nil {
		t.Fatalf("k8s.io/kubernetes at %s has no pkg/kubelet: %v", dir, err)
	}
	fd, ok := s.Func("k8s.io/kubernetes/pkg/kubelet/sysctl", "SafeSysctlAllowlist").Node.(*ast.FuncDecl)
	if !ok || fd.Name.Name != "SafeSysctlAllowlist" {
		t.Errorf("Func returned %v", fd)
	}
}

func fileNames(files []Node) []string {
	var out []string
	for _, f := range files {
		out = append(out, filepath.Base(f.s.fset.File(f.Pos()).Name()))
	}
	return out
}
