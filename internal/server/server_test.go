package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestHealthz(t *testing.T) {
	tests := []struct {
		name     string
		method   string
		err      error
		wantCode int
		wantBody string
	}{
		{name: "healthy", method: http.MethodGet, wantCode: 200, wantBody: "ok"},
		{name: "unhealthy", method: http.MethodGet, err: errors.New("PLEG is not healthy"), wantCode: 500, wantBody: "PLEG is not healthy"},
		{name: "post refused", method: http.MethodPost, wantCode: 405, wantBody: "method not allowed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := HealthzHandler(func() error { return tc.err })
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(tc.method, "/healthz", nil))
			if rec.Code != tc.wantCode || !strings.Contains(rec.Body.String(), tc.wantBody) {
				t.Fatalf("got %d %q, want %d containing %q", rec.Code, rec.Body.String(), tc.wantCode, tc.wantBody)
			}
		})
	}
}

func TestPods(t *testing.T) {
	pod := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-node", Namespace: "default", UID: "u1"},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.88.0.5"},
	}
	for _, tc := range []struct {
		name string
		pods []corev1.Pod
	}{
		{name: "none", pods: nil},
		{name: "one", pods: []corev1.Pod{pod}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := ReadOnlyHandler(func() error { return nil }, func() []corev1.Pod { return tc.pods }, Handlers{})
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/pods", nil))
			if rec.Code != 200 {
				t.Fatalf("code %d: %s", rec.Code, rec.Body)
			}
			if !strings.Contains(rec.Body.String(), `"items":[`) {
				t.Errorf("items must be a list, got %s", rec.Body)
			}
			var got corev1.PodList
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			if got.Kind != "PodList" || got.APIVersion != "v1" {
				t.Errorf("type meta = %v", got.TypeMeta)
			}
			want := tc.pods
			if want == nil {
				want = []corev1.Pod{}
			}
			if diff := cmp.Diff(want, got.Items); diff != "" {
				t.Errorf("items (-want +got):\n%s", diff)
			}
		})
	}
}
