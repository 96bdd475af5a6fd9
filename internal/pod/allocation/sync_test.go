package allocation

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSyncSnapshotAndRecord walks one pod's syncs through the two calls a
// sync makes: its snapshot, then what it records (the first actuation
// with the plan's progress, a failed resize, the resize done, the pod
// terminal), each answered with what is held afterwards and the resize
// events upstream's SyncPod records.
func TestSyncSnapshotAndRecord(t *testing.T) {
	f := newFixture(t, 1000)
	ctx := context.Background()
	v1 := podWithCPU("p", "100m", 1)
	f.admit(v1)
	v2 := podWithCPU("p", "200m", 2)
	f.update(v2)

	snap := f.m.Snapshot(v2)
	if got := snap.Pod.Spec.Containers[0].Resources.Requests.Cpu().String(); got != "200m" || snap.Recorded {
		t.Fatalf("snapshot: allocated cpu %s, recorded %v; want the admitted 200m, nothing recorded", got, snap.Recorded)
	}
	if got := reasons(snap.Conditions); fmt.Sprint(got) != "[PodResizeInProgress//2]" {
		t.Errorf("snapshot conditions = %v", got)
	}
	events := func() []string {
		var out []string
		for _, e := range f.rec.events {
			out = append(out, e.kind+" "+e.reason)
		}
		f.rec.events = nil
		return out
	}
	events()

	steps := []struct {
		name       string
		record     SyncRecord
		wantCPU    string // actuated cpu of container c, "" for none
		wantConds  []string
		wantEvents []string
	}{
		{"nothing", SyncRecord{}, "", []string{"PodResizeInProgress//2"}, nil},
		{"first actuation, resizing", SyncRecord{Actuated: For(v1).ContainerResources, PodActuated: true, Progress: ProgressResizing},
			"100m", []string{"PodResizeInProgress//2"}, nil},
		{"failed resize", SyncRecord{ResizeError: "boom"}, "100m", []string{"PodResizeInProgress/Error/2"}, []string{"Warning ResizeError"}},
		{"the same failure again", SyncRecord{ResizeError: "boom"}, "100m", []string{"PodResizeInProgress/Error/2"}, nil},
		{"applied", SyncRecord{Actuated: For(v2).ContainerResources}, "200m", []string{"PodResizeInProgress/Error/2"}, nil},
		{"done", SyncRecord{Progress: ProgressDone}, "200m", nil, []string{"Normal ResizeCompleted"}},
		{"done again", SyncRecord{Progress: ProgressDone}, "200m", nil, nil},
		{"resizing again", SyncRecord{Progress: ProgressResizing}, "200m", []string{"PodResizeInProgress//2"}, nil},
		{"terminal", SyncRecord{Terminal: true}, "200m", nil, nil},
	}
	for _, s := range steps {
		got := f.m.Record(ctx, snap.Pod, s.record)
		cpu := ""
		if got.Recorded {
			r := got.Actuated.ContainerResources["c"]
			cpu = r.Requests.Cpu().String()
		}
		if cpu != s.wantCPU || !cmp.Equal(reasons(got.Conditions), s.wantConds) || got.Pod != snap.Pod {
			t.Errorf("%s: actuated cpu %q, conditions %v; want %q, %v", s.name, cpu, reasons(got.Conditions), s.wantCPU, s.wantConds)
		}
		if diff := cmp.Diff(s.wantEvents, events()); diff != "" {
			t.Errorf("%s: events (-want +got):\n%s", s.name, diff)
		}
		if diff := cmp.Diff(got, f.m.Snapshot(v2)); diff != "" {
			t.Errorf("%s: Record's answer differs from the next snapshot (-record +snapshot):\n%s", s.name, diff)
		}
	}
}
