package csi

import (
	"encoding/json"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"
)

const (
	testNode    = "node-1"
	testNodeUID = "node-uid-1"
)

// env is a Handler over a fake clientset holding the Node, and a fake
// clock that steps on its own whenever a retry waits on it.
type env struct {
	h      *Handler
	client *fake.Clientset
	clock  *clocktesting.FakeClock
}

func newEnv(t *testing.T, objects ...runtime.Object) *env {
	t.Helper()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: testNode, UID: testNodeUID, Labels: map[string]string{"kubernetes.io/hostname": testNode}}}
	e := &env{client: fake.NewClientset(append([]runtime.Object{node}, objects...)...), clock: clocktesting.NewFakeClock(time.Unix(0, 0))}
	h, err := New(Config{Client: e.client, NodeName: testNode, Clock: e.clock})
	if err != nil {
		t.Fatal(err)
	}
	e.h = h
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		drive(e.clock, done)
	}()
	t.Cleanup(func() { close(done); <-stopped })
	return e
}

// drive steps clk whenever something waits on it, until done is closed:
// the retries' back-off passes at once.
func drive(clk *clocktesting.FakeClock, done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		default:
		}
		if clk.HasWaiters() {
			clk.Step(time.Hour)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// register validates and registers a driver as the plugin manager does.
func (e *env) register(t *testing.T, name, endpoint string, versions ...string) error {
	t.Helper()
	ctx := testContext(t)
	if err := e.h.ValidatePlugin(ctx, name, endpoint, versions); err != nil {
		return err
	}
	return e.h.RegisterPlugin(ctx, name, endpoint, versions, nil)
}

func (e *env) node(t *testing.T) *corev1.Node {
	t.Helper()
	n, err := e.client.CoreV1().Nodes().Get(testContext(t), testNode, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// nodeIDAnnotation decodes the Node's AnnotationNodeID (nil when absent).
func (e *env) nodeIDAnnotation(t *testing.T) map[string]string {
	t.Helper()
	v, ok := e.node(t).Annotations[AnnotationNodeID]
	if !ok {
		return nil
	}
	var ids map[string]string
	if err := json.Unmarshal([]byte(v), &ids); err != nil {
		t.Fatalf("annotation %s = %q: %v", AnnotationNodeID, v, err)
	}
	return ids
}

func (e *env) csiNode(t *testing.T) *storagev1.CSINode {
	t.Helper()
	cs, err := e.client.StorageV1().CSINodes().Get(testContext(t), testNode, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func int32p(n int32) *int32 { return &n }
