package metrics

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2/ktesting"

	"github.com/berthk8s/berth/internal/pod/housekeeping"
	"github.com/berthk8s/berth/internal/pod/podgone"
	"github.com/berthk8s/berth/internal/pod/podworker"
	"github.com/berthk8s/berth/internal/podkit/podutil"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// noWorkers and noRuntime are a node with no pod worker and nothing in
// the runtime.
type noWorkers struct{}

func (noWorkers) SyncKnownPods(context.Context, func(types.UID) bool) map[types.UID]podworker.KnownState {
	return nil
}
func (noWorkers) Known(types.UID) bool                            { return false }
func (noWorkers) Update(context.Context, podworker.UpdateOptions) {}

// mirrorsOnly is a sync loop's desired view with no desired pod and the
// mirror pods the API source shows.
type mirrorsOnly struct{ inAPI *[]*corev1.Pod }

func (mirrorsOnly) Pods() []*corev1.Pod         { return nil }
func (mirrorsOnly) Has(types.UID) bool          { return false }
func (d mirrorsOnly) MirrorPods() []*corev1.Pod { return *d.inAPI }

type noRuntime struct{}

func (noRuntime) ListPods(context.Context) (map[types.UID]*runtimestate.Pod, error) { return nil, nil }

// held is how many pods the startup tracker holds state for.
func (m *Metrics) held() int {
	m.startup.mu.Lock()
	defer m.startup.mu.Unlock()
	n := len(m.startup.pods)
	for uid := range m.startup.excluded {
		if _, ok := m.startup.pods[uid]; !ok {
			n++
		}
	}
	return n
}

// TestMirrorPodsAreForgottenOnceGone (issue #23): the API source shows
// mirror pods, which enter the startup tracker like every pod it shows,
// but no worker ever runs them, so no worker's end forgets them. Once
// the API has them no more, housekeeping finds them orphans and the route
// has the tracker forget them; while the API has them, they stay.
func TestMirrorPodsAreForgottenOnceGone(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	m, clk := newTestMetrics(t)
	route := podgone.New()
	route.Register("pod startup tracker", m)
	var inAPI []*corev1.Pod
	keeper, err := housekeeping.New(housekeeping.Config{
		Workers: noWorkers{}, Gone: route, Runtime: noRuntime{}, SourcesReady: func() bool { return true },
		PodsDir: t.TempDir(), PodLogsDir: t.TempDir(),
		TearDown: func(context.Context, types.UID) error { return nil },
		Desired:  mirrorsOnly{&inAPI},
	})
	if err != nil {
		t.Fatal(err)
	}
	var mirrors []*corev1.Pod
	for i := range 100 {
		mirrors = append(mirrors, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("static-%d-node", i), Namespace: "kube-system", UID: types.UID(fmt.Sprintf("mirror-%d", i)),
			Annotations:       map[string]string{podutil.ConfigMirrorAnnotation: "hash", podutil.ConfigSourceAnnotation: "api"},
			CreationTimestamp: metav1.NewTime(clk.Now()),
		}})
	}
	m.ObservePodsOnWatch(mirrors, podutil.IsStatic, clk.Now())
	inAPI = mirrors
	for range 3 {
		keeper.Run(ctx)
	}
	if n := m.held(); n != 100 {
		t.Fatalf("%d mirror pods held while the API has them, want 100", n)
	}
	inAPI = nil // removed from the API (the source's REMOVE)
	for range 2 {
		keeper.Run(ctx)
	}
	if n := m.held(); n != 0 {
		t.Errorf("%d mirror pods still held after they are gone, want 0", n)
	}
}
