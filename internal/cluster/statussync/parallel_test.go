package statussync

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	testclock "k8s.io/utils/clock/testing"

	"github.com/berthk8s/berth/internal/pod/podstatus"
)

// One pod's slow API request does not hold back another pod's status: the
// PATCH of pod a answers only once pod b's status was patched, which a
// pass that wrote pod after pod (a first) would never see.
func TestPassWritesPodsConcurrently(t *testing.T) {
	a, b := apiPod("u1", corev1.PodPending), apiPod("u2", corev1.PodPending)
	a.Name, b.Name = "web-a", "web-b"
	pods := map[string]*corev1.Pod{"web-a": a, "web-b": b}
	bPatched := make(chan struct{})
	var once sync.Once
	var mu sync.Mutex // guards patched
	var patched []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tail, _ := strings.CutPrefix(r.URL.Path, "/api/v1/namespaces/default/pods/")
		name, sub, _ := strings.Cut(tail, "/")
		pod, ok := pods[name]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if r.Method == http.MethodPatch && sub == "status" {
			if name == "web-a" {
				select {
				case <-bPatched:
				case <-time.After(5 * time.Second):
					http.Error(w, "pod b was not patched while pod a's PATCH was in flight", http.StatusInternalServerError)
					return
				}
			}
			mu.Lock()
			patched = append(patched, name)
			mu.Unlock()
			if name == "web-b" {
				once.Do(func() { close(bPatched) })
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(pod)
	}))
	defer srv.Close()
	client, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	store := podstatus.NewStore(clock.RealClock{})
	s, err := New(Config{
		Client: client, Store: store, Clock: testclock.NewFakeClock(now),
		Pod: func(uid types.UID) (*corev1.Pod, bool) {
			for _, p := range pods {
				if p.UID == uid {
					return p, true
				}
			}
			return nil, false
		},
		MirrorPod:    func(*corev1.Pod) (*corev1.Pod, bool) { return nil, false },
		CanBeDeleted: func(types.UID) bool { return false },
	})
	if err != nil {
		t.Fatal(err)
	}
	store.Set("u1", running())
	store.Set("u2", running())
	s.pass(context.Background(), false, false)
	mu.Lock()
	defer mu.Unlock()
	if len(patched) != 2 || patched[0] != "web-b" || patched[1] != "web-a" {
		t.Errorf("status patches %v, want web-b then web-a", patched)
	}
	if len(s.records) != 2 {
		t.Errorf("records after the pass: %v, want both pods", s.records)
	}
}
