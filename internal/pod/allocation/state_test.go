package allocation

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

// upstreamSample is a checkpoint upstream's kubelet wrote (its
// state_checkpoint_test.go).
const upstreamSample = `{"data":"{\"entries\":{\"pod1\":{\"ContainerResources\":{\"container1\":{\"requests\":{\"cpu\":\"1Ki\",\"memory\":\"1Ki\"}}}}}}","checksum":1178570812}`

func TestSampleIsUpstreams(t *testing.T) {
	src := upstreamsrc.New(t)
	path := filepath.Join(src.ModuleDir("k8s.io/kubernetes"), "pkg/kubelet/allocation/state/state_checkpoint_test.go")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read upstream test: %v", err)
	}
	if !strings.Contains(string(b), upstreamSample) {
		t.Errorf("upstream's %s no longer holds %s", path, upstreamSample)
	}
}

func TestStoreReadsUpstreamsFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, AllocatedFile), []byte(upstreamSample), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := OpenStore(dir, AllocatedFile)
	if err != nil {
		t.Fatalf("OpenStore: %v", err)
	}
	got, ok := s.Get("pod1")
	want := PodResources{ContainerResources: map[string]corev1.ResourceRequirements{"container1": {Requests: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("1Ki"), corev1.ResourceMemory: resource.MustParse("1Ki"),
	}}}}
	if !ok || !cmp.Equal(want, got) {
		t.Errorf("Get(pod1) = %v, %v; want %v", got, ok, want)
	}

	corrupt := strings.Replace(upstreamSample, "1Ki", "2Ki", 1)
	if err := os.WriteFile(filepath.Join(dir, AllocatedFile), []byte(corrupt), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenStore(dir, AllocatedFile); err == nil || !strings.Contains(err.Error(), "corrupted") {
		t.Errorf("OpenStore of a corrupt file: %v, want a checksum error", err)
	}
}

// TestStoreRoundTrip: what a Store writes, a new Store (berth after a
// restart) reads back; Retain drops pods from the file.
func TestStoreRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenStore(dir, ActuatedFile)
	if err != nil {
		t.Fatal(err)
	}
	a := PodResources{
		ContainerResources: map[string]corev1.ResourceRequirements{"web": {Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("35m")}}},
		PodLevelResources:  &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("100Mi")}},
	}
	if err := s.Set("a", a); err != nil {
		t.Fatal(err)
	}
	if err := s.Set("b", PodResources{ContainerResources: map[string]corev1.ResourceRequirements{}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Retain(func(uid types.UID) bool { return uid == "a" }); err != nil {
		t.Fatal(err)
	}
	again, err := OpenStore(dir, ActuatedFile)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := again.Get("a"); !ok || !cmp.Equal(a, got) {
		t.Errorf("after reopening, Get(a) = %v, %v; want %v", got, ok, a)
	}
	if _, ok := again.Get("b"); ok {
		t.Errorf("b survived Retain")
	}
}

// TestMessagesAreUpstreams pins the infeasibility messages and the
// checkpoint names to upstream's sources.
func TestMessagesAreUpstreams(t *testing.T) {
	src := upstreamsrc.New(t)
	dir := filepath.Join(src.ModuleDir("k8s.io/kubernetes"), "pkg/kubelet")
	read := func(rel string) string {
		b, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			t.Fatalf("read upstream: %v", err)
		}
		return string(b)
	}
	handlers := read("allocation/handlers.go")
	for _, s := range []string{
		`"` + msgSwap + `"`,
		`"Resize is infeasible for Guaranteed Pods alongside CPU Manager policy \"%s\""`,
		`"Resize is infeasible for Guaranteed Pods alongside Memory Manager policy \"%s\""`,
		`"` + msgMemoryBackedVolumes + `"`,
	} {
		if !strings.Contains(handlers, s) {
			t.Errorf("upstream's allocation/handlers.go no longer holds %s", s)
		}
	}
	if !strings.Contains(read("allocation/allocation_manager.go"), `allocatedPodsStateFile = "`+AllocatedFile+`"`) ||
		!strings.Contains(read("kuberuntime/kuberuntime_manager.go"), `actuatedPodsStateFile = "`+ActuatedFile+`"`) {
		t.Errorf("upstream's checkpoint names are not %q and %q", AllocatedFile, ActuatedFile)
	}
	for _, s := range []string{MessageResizeStarted, MessageResizeCompleted, MessageResizeError, `"Pod resize %s"`} {
		if !strings.Contains(read("events/resize.go"), strings.Trim(s, "")) {
			t.Errorf("upstream's events/resize.go no longer holds %s", s)
		}
	}
}
