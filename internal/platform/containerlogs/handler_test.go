package containerlogs

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

func testPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "u1"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}, {Name: "fresh"}}},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{
			{
				Name: "app", ContainerID: "containerd://c2", RestartCount: 1,
				State:                corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ContainerID: "containerd://c1"}},
			},
			{Name: "fresh", ContainerID: "containerd://f1", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}},
		}},
	}
}

func TestHandler(t *testing.T) {
	root := t.TempDir()
	podDir := filepath.Join(root, "default_web_u1", "app")
	if err := os.MkdirAll(podDir, 0o750); err != nil {
		t.Fatal(err)
	}
	// c1 is gone from the runtime: its log is found by restart count.
	writeFile(t, filepath.Join(podDir, "0.log"), logLine(0, "stdout", "F", "first run"))
	current := filepath.Join(root, "current.log")
	writeFile(t, current, logLine(1, "stdout", "F", "a"), logLine(2, "stderr", "F", "b"))
	containers := map[string]runtimestate.Container{
		"c2": {ID: "c2", LogPath: current, State: runtimestate.ContainerExited},
	}
	h, err := NewHandler(Config{
		Pod: func(ns, name string) (*corev1.Pod, bool) {
			if ns == "default" && name == "web" {
				return testPod(), true
			}
			return nil, false
		},
		Container: func(uid types.UID, id string) (runtimestate.Container, bool) {
			c, ok := containers[id]
			return c, ok && uid == "u1"
		},
		PodLogsDir: root,
		Clock:      clocktesting.NewFakeClock(t0),
	})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /containerLogs/{namespace}/{pod}/{container}", h)
	tests := []struct {
		name     string
		url      string
		wantCode int
		wantBody string
	}{
		{name: "current", url: "/containerLogs/default/web/app", wantCode: 200, wantBody: "a\nb\n"},
		{name: "follow an exited container ends", url: "/containerLogs/default/web/app?follow=true", wantCode: 200, wantBody: "a\nb\n"},
		{name: "tail", url: "/containerLogs/default/web/app?tailLines=1", wantCode: 200, wantBody: "b\n"},
		{name: "stdout only", url: "/containerLogs/default/web/app?stream=Stdout", wantCode: 200, wantBody: "a\n"},
		{name: "previous", url: "/containerLogs/default/web/app?previous=true", wantCode: 200, wantBody: "first run\n"},
		{name: "negative tail", url: "/containerLogs/default/web/app?tailLines=-1", wantCode: 422, wantBody: "Invalid request."},
		{name: "bad query", url: "/containerLogs/default/web/app?limitBytes=lots", wantCode: 400, wantBody: "Unable to decode query."},
		{name: "unknown pod", url: "/containerLogs/default/nope/app", wantCode: 404, wantBody: `pod "nope" does not exist`},
		{name: "unknown container", url: "/containerLogs/default/web/db", wantCode: 404, wantBody: `container "db" not found in pod "web"`},
		{name: "no previous", url: "/containerLogs/default/web/fresh?previous=1", wantCode: 400,
			wantBody: `previous terminated container "fresh" in pod "web" not found`},
		{name: "log file missing", url: "/containerLogs/default/web/fresh", wantCode: 400, wantBody: "no such file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.url, nil))
			if rec.Code != tc.wantCode || !strings.Contains(rec.Body.String(), tc.wantBody) {
				t.Fatalf("got %d %q, want %d containing %q", rec.Code, rec.Body.String(), tc.wantCode, tc.wantBody)
			}
			if tc.wantCode == 200 && rec.Body.String() != tc.wantBody {
				t.Errorf("body = %q, want %q", rec.Body.String(), tc.wantBody)
			}
		})
	}
}

func TestPickInstance(t *testing.T) {
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	lastGone := corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ContainerID: "containerd://old"}}
	tests := []struct {
		name     string
		status   corev1.ContainerStatus
		previous bool
		want     instance
		wantErr  string
	}{
		{name: "running", status: corev1.ContainerStatus{ContainerID: "containerd://new", RestartCount: 2, State: running},
			want: instance{ID: "new", RestartCount: 2}},
		{name: "previous", status: corev1.ContainerStatus{ContainerID: "containerd://new", RestartCount: 2, State: running, LastTerminationState: lastGone},
			previous: true, want: instance{ID: "old", RestartCount: 1}},
		{name: "no previous", status: corev1.ContainerStatus{State: running}, previous: true, wantErr: `previous terminated container "app" in pod "web" not found`},
		{name: "terminated", status: corev1.ContainerStatus{ContainerID: "containerd://x", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ContainerID: "containerd://x"}}},
			want: instance{ID: "x"}},
		{name: "crash loop shows the last run", status: corev1.ContainerStatus{RestartCount: 3, LastTerminationState: lastGone,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}},
			want: instance{ID: "old", RestartCount: 2}},
		{name: "image pull", status: corev1.ContainerStatus{State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull"}}},
			wantErr: "is waiting to start: image can't be pulled"},
		{name: "waiting", status: corev1.ContainerStatus{State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}},
			wantErr: `container "app" in pod "web" is waiting to start: ContainerCreating`},
		{name: "no state", status: corev1.ContainerStatus{}, wantErr: "no logs available"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.status.Name = "app"
			st := corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{tc.status}}
			got, err := pickInstance("web", &st, "app", tc.previous)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
	if _, err := pickInstance("web", &corev1.PodStatus{}, "app", false); err == nil || !strings.Contains(err.Error(), "is not available") {
		t.Errorf("missing status: err = %v", err)
	}
}
