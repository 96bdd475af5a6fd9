package nodeshutdown

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
)

func TestPeriods(t *testing.T) {
	sec := func(n int) metav1.Duration { return metav1.Duration{Duration: time.Duration(n) * time.Second} }
	tests := []struct {
		name string
		kc   kubeletconfigv1beta1.KubeletConfiguration
		want []Period
	}{
		{name: "off"},
		{name: "period without critical part", kc: kubeletconfigv1beta1.KubeletConfiguration{ShutdownGracePeriod: sec(30)},
			want: []Period{{0, 30}, {2000000000, 0}}},
		{name: "period with critical part", kc: kubeletconfigv1beta1.KubeletConfiguration{ShutdownGracePeriod: sec(30), ShutdownGracePeriodCriticalPods: sec(10)},
			want: []Period{{0, 20}, {2000000000, 10}}},
		{name: "by priority, sorted", kc: kubeletconfigv1beta1.KubeletConfiguration{ShutdownGracePeriodByPodPriority: []kubeletconfigv1beta1.ShutdownGracePeriodByPodPriority{
			{Priority: 100000, ShutdownGracePeriodSeconds: 10}, {Priority: 0, ShutdownGracePeriodSeconds: 60}, {Priority: 2000000000, ShutdownGracePeriodSeconds: 20},
		}}, want: []Period{{0, 60}, {100000, 10}, {2000000000, 20}}},
		{name: "critical over period is off", kc: kubeletconfigv1beta1.KubeletConfiguration{ShutdownGracePeriod: sec(5), ShutdownGracePeriodCriticalPods: sec(10)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Periods(&tt.kc)); diff != "" {
				t.Errorf("Periods (-want +got):\n%s", diff)
			}
		})
	}
	if got := Requested([]Period{{0, 20}, {2000000000, 10}}); got != 30*time.Second {
		t.Errorf("Requested = %v; want 30s", got)
	}
}

func pod(name string, priority *int32, grace *int64) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{Priority: priority, TerminationGracePeriodSeconds: grace}}
}

// TestPlan: one base (a default pod, a critical pod, periods of 20s and
// 10s) and one change per row.
func TestPlan(t *testing.T) {
	critical := ptr.To[int32](2000001000) // system-node-critical
	basePeriods := []Period{{0, 20}, {2000000000, 10}}
	tests := []struct {
		name    string
		periods []Period
		pods    []*corev1.Pod
		want    []Group
	}{
		{name: "off", pods: []*corev1.Pod{pod("a", nil, nil)}},
		{name: "no pods: every group, empty", periods: basePeriods,
			want: []Group{{Priority: 0, GracePeriodSeconds: 20}, {Priority: 2000000000, GracePeriodSeconds: 10}}},
		{name: "default and critical pods", periods: basePeriods,
			pods: []*corev1.Pod{pod("critical", critical, nil), pod("app", nil, nil)},
			want: []Group{
				{Priority: 0, GracePeriodSeconds: 20, Pods: []Kill{{pod("app", nil, nil), 20}}},
				{Priority: 2000000000, GracePeriodSeconds: 10, Pods: []Kill{{pod("critical", critical, nil), 10}}},
			}},
		{name: "a pod's shorter terminationGracePeriodSeconds wins", periods: basePeriods,
			pods: []*corev1.Pod{pod("quick", nil, ptr.To[int64](3)), pod("slow", nil, ptr.To[int64](300))},
			want: []Group{
				{Priority: 0, GracePeriodSeconds: 20, Pods: []Kill{{pod("quick", nil, ptr.To[int64](3)), 3}, {pod("slow", nil, ptr.To[int64](300)), 20}}},
				{Priority: 2000000000, GracePeriodSeconds: 10},
			}},
		{name: "negative priority goes to the lowest group", periods: []Period{{10, 5}, {1000, 7}},
			pods: []*corev1.Pod{pod("low", ptr.To[int32](-5), nil)},
			want: []Group{{Priority: 10, GracePeriodSeconds: 5, Pods: []Kill{{pod("low", ptr.To[int32](-5), nil), 5}}}, {Priority: 1000, GracePeriodSeconds: 7}}},
		{name: "between two periods: the lower one", periods: []Period{{0, 5}, {100, 6}, {1000, 7}},
			pods: []*corev1.Pod{pod("mid", ptr.To[int32](500), nil), pod("exact", ptr.To[int32](100), nil), pod("top", ptr.To[int32](5000), nil)},
			want: []Group{
				{Priority: 0, GracePeriodSeconds: 5},
				{Priority: 100, GracePeriodSeconds: 6, Pods: []Kill{{pod("mid", ptr.To[int32](500), nil), 6}, {pod("exact", ptr.To[int32](100), nil), 6}}},
				{Priority: 1000, GracePeriodSeconds: 7, Pods: []Kill{{pod("top", ptr.To[int32](5000), nil), 7}}},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Plan(tt.periods, tt.pods)); diff != "" {
				t.Errorf("Plan (-want +got):\n%s", diff)
			}
		})
	}
}
