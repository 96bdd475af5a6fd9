package admission

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSortByCreation(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pod := func(name string, age time.Duration) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(t0.Add(-age))}}
	}
	pods := []*corev1.Pod{pod("young", 0), pod("old", time.Hour), pod("twin-a", time.Minute), pod("twin-b", time.Minute)}
	SortByCreation(pods)
	var got []string
	for _, p := range pods {
		got = append(got, p.Name)
	}
	if diff := cmp.Diff([]string{"old", "twin-a", "twin-b", "young"}, got); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}
