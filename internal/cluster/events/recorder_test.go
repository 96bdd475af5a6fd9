package events

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2"
)

const nodeName = "node-a"

func testPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "uid-1", ResourceVersion: "7"},
		Spec: corev1.PodSpec{
			InitContainers:      []corev1.Container{{Name: "setup"}},
			Containers:          []corev1.Container{{Name: "app"}},
			EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug"}}},
		},
	}
}

// logLines captures what the recorder logs, up to V(1).
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logger() klog.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.lines = append(l.lines, args)
	}, funcr.Options{Verbosity: 1})
}

func (l *logLines) all() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// newSending returns a recorder on a fake clientset and a channel that
// receives every event the broadcaster creates through the API.
func newSending(t *testing.T, logs *logLines) (*Recorder, <-chan *corev1.Event) {
	t.Helper()
	client := fake.NewClientset()
	created := make(chan *corev1.Event, 10)
	client.PrependReactor("create", "events", func(action k8stesting.Action) (bool, runtime.Object, error) {
		ev := action.(k8stesting.CreateAction).GetObject().(*corev1.Event)
		created <- ev.DeepCopy()
		return true, ev, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	r, err := New(ctx, Config{Client: client, NodeName: nodeName, QPS: 50, Burst: 100, Logger: logs.logger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Shutdown)
	return r, created
}

func receive(t *testing.T, created <-chan *corev1.Event) *corev1.Event {
	t.Helper()
	select {
	case ev := <-created:
		return ev
	case <-time.After(30 * time.Second):
		t.Fatal("no event reached the API")
		return nil
	}
}

// ignoreGenerated leaves out what client-go generates: name and timestamps.
var ignoreGenerated = cmpopts.IgnoreFields(corev1.Event{}, "ObjectMeta", "FirstTimestamp", "LastTimestamp", "EventTime")

func TestEventsReachTheAPI(t *testing.T) {
	source := corev1.EventSource{Component: "kubelet", Host: nodeName}
	podObj := corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: "shop", Name: "web", UID: "uid-1", ResourceVersion: "7"}
	withPath := func(path string) corev1.ObjectReference {
		ref := podObj
		ref.FieldPath = path
		return ref
	}
	tests := []struct {
		name   string
		record func(r *Recorder)
		wantNS string
		want   corev1.Event
	}{{
		name: "pod",
		record: func(r *Recorder) {
			r.Eventf(testPod(), corev1.EventTypeWarning, "FailedCreatePodSandBox", "Failed to create pod sandbox: %v", "boom")
		},
		wantNS: "shop",
		want: corev1.Event{
			InvolvedObject: podObj, Reason: "FailedCreatePodSandBox", Message: "Failed to create pod sandbox: boom",
			Source: source, Count: 1, Type: corev1.EventTypeWarning, ReportingController: "kubelet", ReportingInstance: nodeName,
		},
	}, {
		name: "container",
		record: func(r *Recorder) {
			r.ContainerEventf(testPod(), "app", corev1.EventTypeNormal, "Started", "Started container %s", "app")
		},
		wantNS: "shop",
		want: corev1.Event{
			InvolvedObject: withPath("spec.containers{app}"), Reason: "Started", Message: "Started container app",
			Source: source, Count: 1, Type: corev1.EventTypeNormal, ReportingController: "kubelet", ReportingInstance: nodeName,
		},
	}, {
		name:   "init container",
		record: func(r *Recorder) { r.ContainerEventf(testPod(), "setup", corev1.EventTypeNormal, "Pulled", "pulled") },
		wantNS: "shop",
		want: corev1.Event{
			InvolvedObject: withPath("spec.initContainers{setup}"), Reason: "Pulled", Message: "pulled",
			Source: source, Count: 1, Type: corev1.EventTypeNormal, ReportingController: "kubelet", ReportingInstance: nodeName,
		},
	}, {
		name:   "ephemeral container",
		record: func(r *Recorder) { r.ContainerEventf(testPod(), "debug", corev1.EventTypeNormal, "Created", "created") },
		wantNS: "shop",
		want: corev1.Event{
			InvolvedObject: withPath("spec.ephemeralContainers{debug}"), Reason: "Created", Message: "created",
			Source: source, Count: 1, Type: corev1.EventTypeNormal, ReportingController: "kubelet", ReportingInstance: nodeName,
		},
	}, {
		name:   "node",
		record: func(r *Recorder) { r.NodeEventf(corev1.EventTypeNormal, "Starting", "Starting kubelet.") },
		wantNS: "default",
		want: corev1.Event{
			InvolvedObject: corev1.ObjectReference{Kind: "Node", Name: nodeName, UID: nodeName},
			Reason:         "Starting", Message: "Starting kubelet.",
			Source: source, Count: 1, Type: corev1.EventTypeNormal, ReportingController: "kubelet", ReportingInstance: nodeName,
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, created := newSending(t, &logLines{})
			tt.record(r)
			got := receive(t, created)
			if got.Namespace != tt.wantNS {
				t.Errorf("event namespace = %q, want %q", got.Namespace, tt.wantNS)
			}
			if diff := cmp.Diff(tt.want, *got, ignoreGenerated); diff != "" {
				t.Errorf("event (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUnknownContainerIsOnlyLogged(t *testing.T) {
	logs := &logLines{}
	r, created := newSending(t, logs)
	r.ContainerEventf(testPod(), "nope", corev1.EventTypeWarning, "Failed", "gone")
	// Events go through one queue in order: once the next event arrives,
	// the first one would have arrived before it.
	r.Eventf(testPod(), corev1.EventTypeNormal, "Marker", "after")
	if got := receive(t, created); got.Reason != "Marker" {
		t.Errorf("first event reaching the API = %q, want Marker", got.Reason)
	}
	if !strings.Contains(logs.all(), `"reason"="Failed"`) {
		t.Errorf("event not logged; log:\n%s", logs.all())
	}
}

func TestStandaloneOnlyLogs(t *testing.T) {
	logs := &logLines{}
	r, err := New(context.Background(), Config{NodeName: nodeName, Logger: logs.logger()})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Shutdown()
	r.Eventf(testPod(), corev1.EventTypeWarning, "BackOff", "Back-off restarting failed container %s", "app")
	r.ContainerEventf(testPod(), "app", corev1.EventTypeNormal, "Pulling", "Pulling image %q", "busybox")
	r.NodeEventf(corev1.EventTypeNormal, "NodeReady", "Node %s status is now: NodeReady", nodeName)

	got := logs.all()
	for _, want := range []string{
		`"msg"="Warning event" "type"="Warning" "pod"={"name"="web" "namespace"="shop"} "reason"="BackOff" "message"="Back-off restarting failed container app"`,
		`"msg"="Event" "type"="Normal" "pod"={"name"="web" "namespace"="shop"} "container"="app" "reason"="Pulling" "message"="Pulling image \"busybox\""`,
		`"msg"="Event" "type"="Normal" "node"={"name"="node-a"} "reason"="NodeReady" "message"="Node node-a status is now: NodeReady"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("log lacks\n%s\nlog:\n%s", want, got)
		}
	}
}

func TestNormalEventsLogAtV1(t *testing.T) {
	var lines []string
	quiet := funcr.New(func(_, args string) { lines = append(lines, args) }, funcr.Options{Verbosity: 0})
	r, err := New(context.Background(), Config{NodeName: nodeName, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	r.Eventf(testPod(), corev1.EventTypeNormal, "Started", "started")
	r.Eventf(testPod(), corev1.EventTypeWarning, "Failed", "failed")
	var events []string
	for _, l := range lines {
		if strings.Contains(l, `"reason"=`) {
			events = append(events, l)
		}
	}
	if len(events) != 1 || !strings.Contains(events[0], `"reason"="Failed"`) {
		t.Errorf("at V(0) logged %q, want only the Warning event", events)
	}
}

func TestShutdownThenRecordOnlyLogs(t *testing.T) {
	logs := &logLines{}
	r, _ := newSending(t, logs)
	r.Shutdown()
	r.Shutdown()
	r.NodeEventf(corev1.EventTypeWarning, "Rebooted", "rebooted")
	if !strings.Contains(logs.all(), `"reason"="Rebooted"`) {
		t.Errorf("event not logged after Shutdown; log:\n%s", logs.all())
	}
	if strings.Contains(logs.all(), "Unable to record event") {
		t.Errorf("event handed to the stopped broadcaster; log:\n%s", logs.all())
	}
}

func TestCanceledContextThenRecordOnlyLogs(t *testing.T) {
	logs := &logLines{}
	ctx, cancel := context.WithCancel(context.Background())
	r, err := New(ctx, Config{Client: fake.NewClientset(), NodeName: nodeName, Logger: logs.logger()})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	r.Eventf(testPod(), corev1.EventTypeWarning, "Late", "late")
	if !strings.Contains(logs.all(), `"reason"="Late"`) {
		t.Errorf("event not logged after the context ended; log:\n%s", logs.all())
	}
	if strings.Contains(logs.all(), "Unable to record event") {
		t.Errorf("event handed to the stopped broadcaster; log:\n%s", logs.all())
	}
}

func TestNewNeedsNodeName(t *testing.T) {
	if _, err := New(context.Background(), Config{}); err == nil {
		t.Error("New without NodeName succeeded")
	}
}

func TestLimits(t *testing.T) {
	type lim struct {
		Fill float32
		Size int
		OK   bool
	}
	tests := []struct {
		name  string
		qps   float32
		burst int
		want  lim
	}{
		{"kubelet defaults", 50, 100, lim{50, 100, true}},
		{"zero takes client defaults", 0, 0, lim{5, 10, true}},
		{"zero burst takes client default", 20, 0, lim{20, 10, true}},
		{"negative qps is no limit", -1, 100, lim{0, 0, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fill, size, ok := limits(tt.qps, tt.burst)
			if diff := cmp.Diff(tt.want, lim{fill, size, ok}); diff != "" {
				t.Errorf("limits(%v, %v) (-want +got):\n%s", tt.qps, tt.burst, diff)
			}
		})
	}
}
