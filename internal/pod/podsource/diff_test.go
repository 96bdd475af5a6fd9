package podsource

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

const oldSeen = "2026-11-22T18:00:00Z"

// testPod is a stored-looking pod: source annotation and an old seen time.
func testPod(name string, mutate ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "default", UID: types.UID("uid-" + name),
			Labels:      map[string]string{"app": name},
			Annotations: map[string]string{podutil.ConfigSourceAnnotation: podutil.FileSource, podutil.ConfigSeenAnnotation: oldSeen, "team": "a"},
		},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i:1"}}},
	}
	for _, m := range mutate {
		m(p)
	}
	return p
}

func summarize(updates []Update) []string {
	var out []string
	for _, u := range updates {
		var names []string
		for _, p := range u.Pods {
			names = append(names, p.Name)
		}
		out = append(out, fmt.Sprintf("%s:%s", u.Op, strings.Join(names, ",")))
	}
	return out
}

func TestDiffPods(t *testing.T) {
	now := time.Date(2026, 11, 22, 19, 0, 0, 0, time.UTC)
	nowSeen := now.Format(time.RFC3339Nano)
	set := func(pods ...*corev1.Pod) podSet {
		s := podSet{}
		for _, p := range pods {
			s[p.UID] = p
		}
		return s
	}
	tests := []struct {
		name     string
		old      podSet
		incoming []*corev1.Pod
		first    bool
		want     []string
		// wantSeen is the stored config.seen of each pod after the diff.
		wantSeen map[string]string
		wantDups int
		// wantRefused is the number of pods refused for their UID.
		wantRefused int
	}{
		{name: "first empty snapshot announces the source", first: true, want: []string{"ADD:"}},
		{name: "later empty snapshot is quiet", old: set()},
		{name: "first snapshot with pods", first: true, incoming: []*corev1.Pod{testPod("a")}, want: []string{"ADD:a"}},
		{
			name:     "new pod without seen gets now",
			incoming: []*corev1.Pod{testPod("a", func(p *corev1.Pod) { delete(p.Annotations, podutil.ConfigSeenAnnotation) })},
			want:     []string{"ADD:a"}, wantSeen: map[string]string{"a": nowSeen},
		},
		{name: "identical", old: set(testPod("a")), incoming: []*corev1.Pod{testPod("a")}, wantSeen: map[string]string{"a": oldSeen}},
		{
			name: "only local annotations differ", old: set(testPod("a")),
			incoming: []*corev1.Pod{testPod("a", func(p *corev1.Pod) {
				p.Annotations[podutil.ConfigSeenAnnotation] = nowSeen
				p.Annotations[podutil.ConfigMirrorAnnotation] = "x"
			})},
			wantSeen: map[string]string{"a": oldSeen},
		},
		{
			name: "spec change keeps first seen", old: set(testPod("a")),
			incoming: []*corev1.Pod{testPod("a", func(p *corev1.Pod) {
				p.Spec.Containers[0].Image = "i:2"
				p.Annotations[podutil.ConfigSeenAnnotation] = nowSeen
			})},
			want: []string{"UPDATE:a"}, wantSeen: map[string]string{"a": oldSeen},
		},
		{
			// kubectl debug: the ephemeralcontainers subresource changes
			// nothing else of the pod, not even its generation.
			name: "ephemeral container added", old: set(testPod("a")),
			incoming: []*corev1.Pod{testPod("a", func(p *corev1.Pod) {
				p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debugger", Image: "busybox"}}}
			})},
			want: []string{"UPDATE:a"}, wantSeen: map[string]string{"a": oldSeen},
		},
		{name: "label change", old: set(testPod("a")), incoming: []*corev1.Pod{testPod("a", func(p *corev1.Pod) { p.Labels["v"] = "2" })}, want: []string{"UPDATE:a"}},
		{name: "annotation change", old: set(testPod("a")), incoming: []*corev1.Pod{testPod("a", func(p *corev1.Pod) { p.Annotations["team"] = "b" })}, want: []string{"UPDATE:a"}},
		{name: "annotation removed", old: set(testPod("a")), incoming: []*corev1.Pod{testPod("a", func(p *corev1.Pod) { delete(p.Annotations, "team") })}, want: []string{"UPDATE:a"}},
		{
			name: "deletion timestamp set", old: set(testPod("a")),
			incoming: []*corev1.Pod{testPod("a", func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{Time: now} })},
			want:     []string{"DELETE:a"},
		},
		{
			name: "status only", old: set(testPod("a")),
			incoming: []*corev1.Pod{testPod("a", func(p *corev1.Pod) { p.Status.Phase = corev1.PodRunning })},
			want:     []string{"RECONCILE:a"}, wantSeen: map[string]string{"a": oldSeen},
		},
		{name: "pod gone", old: set(testPod("a"), testPod("b")), incoming: []*corev1.Pod{testPod("b")}, want: []string{"REMOVE:a"}},
		{
			name: "mixed, in upstream order", old: set(testPod("a"), testPod("b"), testPod("d"), testPod("e")),
			incoming: []*corev1.Pod{
				testPod("e", func(p *corev1.Pod) { p.Status.Message = "m" }),
				testPod("d", func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{Time: now} }),
				testPod("c"),
				testPod("a", func(p *corev1.Pod) { p.Spec.Containers[0].Image = "i:2" }),
			},
			want: []string{"REMOVE:b", "ADD:c", "UPDATE:a", "DELETE:d", "RECONCILE:e"},
		},
		{
			name:     "duplicate full name dropped",
			incoming: []*corev1.Pod{testPod("a"), testPod("a", func(p *corev1.Pod) { p.UID = "other" })},
			want:     []string{"ADD:a"}, wantDups: 1,
		},
		{
			name: "a UID that is no path element is refused, the others pass",
			incoming: []*corev1.Pod{
				testPod("evil", func(p *corev1.Pod) { p.UID = "../../x" }),
				testPod("a"),
				testPod("empty", func(p *corev1.Pod) { p.UID = "" }),
			},
			want: []string{"ADD:a"}, wantRefused: 2,
		},
		{
			name: "an update to a refused UID removes nothing else", old: set(testPod("a")),
			incoming:    []*corev1.Pod{testPod("a"), testPod("b", func(p *corev1.Pod) { p.UID = "b/../../.." })},
			wantRefused: 1, wantSeen: map[string]string{"a": oldSeen},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			oldCopy := map[types.UID]*corev1.Pod{}
			for k, v := range tt.old {
				oldCopy[k] = v.DeepCopy()
			}
			r := diffPods(podutil.FileSource, tt.old, tt.incoming, now)
			if diff := cmp.Diff(tt.want, summarize(r.toUpdates(podutil.FileSource, tt.first))); diff != "" {
				t.Errorf("updates (-want +got):\n%s", diff)
			}
			if len(r.refused) != tt.wantRefused {
				t.Errorf("refused = %d, want %d", len(r.refused), tt.wantRefused)
			}
			if len(r.duplicates) != tt.wantDups {
				t.Errorf("duplicates = %d, want %d", len(r.duplicates), tt.wantDups)
			}
			for name, seen := range tt.wantSeen {
				got := r.next[types.UID("uid-"+name)].Annotations[podutil.ConfigSeenAnnotation]
				if got != seen {
					t.Errorf("pod %s: stored seen %q, want %q", name, got, seen)
				}
			}
			if diff := cmp.Diff(oldCopy, map[types.UID]*corev1.Pod(tt.old)); diff != "" && tt.old != nil {
				t.Errorf("diffPods changed old (-before +after):\n%s", diff)
			}
			for _, p := range r.next {
				if p.Annotations[podutil.ConfigSourceAnnotation] != podutil.FileSource {
					t.Errorf("pod %s: stored without source annotation", p.Name)
				}
			}
		})
	}
}

// storedSet is old as the merger stores it: every pod with its source
// annotation.
func storedSet(old podSet) podSet {
	for _, p := range old {
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations[podutil.ConfigSourceAnnotation] = podutil.FileSource
	}
	return old
}

func TestApplyUpdate(t *testing.T) {
	old := storedSet(podSet{"uid-a": testPod("a"), "uid-b": testPod("b")})
	tests := []struct {
		name string
		u    Update
		want []string
	}{
		{"add", Update{Op: OpAdd, Pods: []*corev1.Pod{testPod("c")}}, []string{"a", "b", "c"}},
		{"update replaces", Update{Op: OpUpdate, Pods: []*corev1.Pod{testPod("a", func(p *corev1.Pod) { p.Labels["v"] = "2" })}}, []string{"a", "b"}},
		{"remove", Update{Op: OpRemove, Pods: []*corev1.Pod{testPod("a")}}, []string{"b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := applyUpdate(old, tt.u)
			var names []string
			for _, p := range got {
				names = append(names, p.Name)
				brought := slices.ContainsFunc(tt.u.Pods, func(u *corev1.Pod) bool { return u.UID == p.UID })
				switch {
				case brought && (p == old[p.UID] || slices.Contains(tt.u.Pods, p)):
					t.Errorf("pod %s the update brings is not a copy of its own", p.Name)
				case !brought && p != old[p.UID]:
					t.Errorf("pod %s the update does not touch is not the stored pod", p.Name)
				}
			}
			if diff := cmp.Diff(tt.want, names); diff != "" {
				t.Errorf("pods (-want +got):\n%s", diff)
			}
			// The untouched pods are the stored ones: diffPods passes them
			// over, and reports only what the update changed.
			r := diffPods(podutil.FileSource, storedSet(old), got, time.Unix(0, 0))
			if n := len(r.adds) + len(r.updates) + len(r.deletes) + len(r.reconciles) + len(r.removes); n != len(tt.u.Pods) {
				t.Errorf("diff of the applied update has %d changes, want %d", n, len(tt.u.Pods))
			}
		})
	}
}

// BenchmarkIncrementalChange is what one watch event of the API source
// costs the merger with 100 pods stored: one pod's status changed.
func BenchmarkIncrementalChange(b *testing.B) {
	old := podSet{}
	for i := range 100 {
		p := testPod(fmt.Sprintf("p%03d", i))
		old[p.UID] = p
	}
	storedSet(old)
	changed := testPod("p050", func(p *corev1.Pod) { p.Status.Phase = corev1.PodRunning })
	u := Update{Op: OpReconcile, Pods: []*corev1.Pod{changed}}
	b.ReportAllocs()
	for b.Loop() {
		r := diffPods(podutil.FileSource, old, applyUpdate(old, u), time.Unix(0, 0))
		if len(r.reconciles) != 1 {
			b.Fatalf("reconciles = %d, want 1", len(r.reconciles))
		}
	}
}
