package gc

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestUpdateRecords(t *testing.T) {
	t1, t2 := t0.Add(time.Minute), t0.Add(2*time.Minute)
	records := map[string]*Image{}
	list := func(imgs ...*runtimeapi.Image) []*runtimeapi.Image { return imgs }
	a := &runtimeapi.Image{Id: "sha256:a", RepoTags: []string{"example.com/a:1"}, Size: 10}
	b := &runtimeapi.Image{Id: "sha256:b", RepoDigests: []string{"example.com/b@sha256:bb"}, Size: 20, Pinned: true}
	c := &runtimeapi.Image{Id: "sha256:c", Size: 30}

	// First sight at t0: a is used through its tag.
	got := updateRecords(records, list(a, b), map[string]bool{"example.com/a:1": true}, t0)
	want := []Image{
		{ID: "sha256:a", Size: 10, FirstDetected: t0, LastUsed: t0, InUse: true},
		{ID: "sha256:b", Size: 20, FirstDetected: t0, Pinned: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("first listing (-want +got):\n%s", diff)
	}
	// At t1: a is no longer used (it keeps its last use), b is used by
	// its digest, c is new.
	got = updateRecords(records, list(a, b, c), map[string]bool{"example.com/b@sha256:bb": true}, t1)
	want = []Image{
		{ID: "sha256:a", Size: 10, FirstDetected: t0, LastUsed: t0},
		{ID: "sha256:b", Size: 20, FirstDetected: t0, LastUsed: t1, InUse: true, Pinned: true},
		{ID: "sha256:c", Size: 30, FirstDetected: t1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("second listing (-want +got):\n%s", diff)
	}
	// At t2: a is gone and forgotten; c is used by its ID.
	got = updateRecords(records, list(b, c), map[string]bool{"sha256:c": true}, t2)
	want = []Image{
		{ID: "sha256:b", Size: 20, FirstDetected: t0, LastUsed: t1, Pinned: true},
		{ID: "sha256:c", Size: 30, FirstDetected: t1, LastUsed: t2, InUse: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("third listing (-want +got):\n%s", diff)
	}
	if _, ok := records["sha256:a"]; ok {
		t.Error("the record of a removed image is kept")
	}
}
