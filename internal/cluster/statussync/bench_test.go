package statussync

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/clock"
	testclock "k8s.io/utils/clock/testing"

	"github.com/berthk8s/berth/internal/pod/podstatus"
)

// BenchmarkPassOneChange is the pass on one pod's status change on a
// node with 100 pods whose statuses are written: what each status change
// of a burst costs the syncer (the fake clientset's GET and PATCH
// included).
func BenchmarkPassOneChange(b *testing.B) {
	const n = 100
	objs := make([]runtime.Object, 0, n)
	pods := map[types.UID]*corev1.Pod{}
	for i := range n {
		p := namedPod(fmt.Sprintf("u%03d", i), fmt.Sprintf("web-%03d", i))
		objs = append(objs, p)
		pods[p.UID] = p
	}
	store := podstatus.NewStore(clock.RealClock{})
	s, err := New(Config{
		Client: fake.NewClientset(objs...), Store: store, Clock: testclock.NewFakeClock(now),
		Pod:          func(uid types.UID) (*corev1.Pod, bool) { p, ok := pods[uid]; return p, ok },
		MirrorPod:    func(*corev1.Pod) (*corev1.Pod, bool) { return nil, false },
		CanBeDeleted: func(types.UID) bool { return false },
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for uid := range pods {
		store.Set(uid, running())
	}
	s.pass(ctx, true, false)
	statuses := []corev1.PodStatus{failed(), running()}
	b.ResetTimer()
	for i := range b.N {
		store.Set("u042", statuses[i%2])
		s.pass(ctx, false, false)
	}
}
