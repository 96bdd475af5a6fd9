package soak

import (
	"context"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/berthk8s/berth/test/bench"
)

// rssMiB is the kubelet's resident memory, the median of five readings a
// second apart (one reading catches the heap mid-cycle).
func rssMiB(ctx context.Context, n *bench.Node) (float64, error) {
	var got []float64
	for range 5 {
		b, err := bench.RSSBytes(n.Pid())
		if err != nil {
			return 0, err
		}
		got = append(got, float64(b)/(1<<20))
		if err := sleep(ctx, time.Second); err != nil {
			return 0, err
		}
	}
	slices.Sort(got)
	return got[len(got)/2], nil
}

// readyWatch polls a Node's Ready condition until stopped and adds up how
// long it was seen not Ready (or could not be read).
type readyWatch struct {
	stop chan struct{}
	done chan struct{}
	mu   sync.Mutex // guards notReady
	// notReady is the time seen not Ready so far.
	notReady time.Duration
}

func watchReady(ctx context.Context, c kubernetes.Interface, name string) *readyWatch {
	w := &readyWatch{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		t := time.NewTicker(poll)
		defer t.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			n, err := c.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil || !nodeReady(n) {
				w.mu.Lock()
				w.notReady += poll
				w.mu.Unlock()
			}
		}
	}()
	return w
}

// end stops the watch and returns the time seen not Ready.
func (w *readyWatch) end() time.Duration {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.notReady
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// waitRecovered waits up to timeout until the Node is Ready and the n pods
// of run are Running; it returns how long that took.
func waitRecovered(ctx context.Context, e *env, run string, n int, timeout time.Duration) (time.Duration, error) {
	began := time.Now()
	readyCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if _, err := bench.WaitNodeReady(readyCtx, e.client, e.name); err != nil {
		return 0, err
	}
	if _, err := waitRunning(ctx, e.client, run, n, timeout-time.Since(began)); err != nil {
		return 0, err
	}
	return time.Since(began), nil
}
