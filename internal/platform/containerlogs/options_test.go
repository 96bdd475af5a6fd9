package containerlogs

import (
	"math"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestParseQuery(t *testing.T) {
	since := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	all := ptr.To(corev1.LogStreamAll)
	tests := []struct {
		name    string
		query   string
		want    *corev1.PodLogOptions
		wantErr bool
	}{
		{name: "empty", query: "", want: &corev1.PodLogOptions{Stream: all}},
		{name: "booleans", query: "follow=true&previous=1&timestamps=yes",
			want: &corev1.PodLogOptions{Follow: true, Previous: true, Timestamps: true, Stream: all}},
		{name: "false booleans", query: "follow=false&previous=0", want: &corev1.PodLogOptions{Stream: all}},
		{name: "numbers", query: "tailLines=5&limitBytes=100&sinceSeconds=30",
			want: &corev1.PodLogOptions{TailLines: ptr.To[int64](5), LimitBytes: ptr.To[int64](100), SinceSeconds: ptr.To[int64](30), Stream: all}},
		{name: "legacy tail", query: "tail=7", want: &corev1.PodLogOptions{TailLines: ptr.To[int64](7), Stream: all}},
		{name: "legacy tail all", query: "tail=all&tailLines=3", want: &corev1.PodLogOptions{Stream: all}},
		{name: "since time", query: "sinceTime=2026-11-22T10:00:00Z",
			want: &corev1.PodLogOptions{SinceTime: &metav1.Time{Time: since}, Stream: all}},
		{name: "stream", query: "stream=Stderr", want: &corev1.PodLogOptions{Stream: ptr.To("Stderr")}},
		{name: "bad number", query: "tailLines=x", wantErr: true},
		{name: "bad time", query: "sinceTime=now", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, err := url.ParseQuery(tc.query)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseQuery(q)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		opts    corev1.PodLogOptions
		wantErr string
	}{
		{name: "valid", opts: corev1.PodLogOptions{TailLines: ptr.To[int64](0), LimitBytes: ptr.To[int64](1), SinceSeconds: ptr.To[int64](1)}},
		{name: "negative tail", opts: corev1.PodLogOptions{TailLines: ptr.To[int64](-1)}, wantErr: "tailLines: Invalid value: -1: must be greater than or equal to 0"},
		{name: "zero limit", opts: corev1.PodLogOptions{LimitBytes: ptr.To[int64](0)}, wantErr: "limitBytes"},
		{name: "both since", opts: corev1.PodLogOptions{SinceSeconds: ptr.To[int64](1), SinceTime: &metav1.Time{}}, wantErr: "at most one of"},
		{name: "zero since", opts: corev1.PodLogOptions{SinceSeconds: ptr.To[int64](0)}, wantErr: "sinceSeconds"},
		{name: "bad stream", opts: corev1.PodLogOptions{Stream: ptr.To("Stdin")}, wantErr: "stream: Unsupported value"},
		{name: "stream with tail", opts: corev1.PodLogOptions{Stream: ptr.To("Stdout"), TailLines: ptr.To[int64](1)}, wantErr: "mutually exclusive"},
		{name: "all with tail", opts: corev1.PodLogOptions{Stream: ptr.To("All"), TailLines: ptr.To[int64](1)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Validate(&tc.opts)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestFromPodLogOptions(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		in   corev1.PodLogOptions
		want Options
	}{
		{name: "defaults", want: Options{TailLines: -1}},
		{name: "all fields", in: corev1.PodLogOptions{Follow: true, Timestamps: true, TailLines: ptr.To[int64](3), LimitBytes: ptr.To[int64](9), SinceSeconds: ptr.To[int64](60)},
			want: Options{Follow: true, Timestamps: true, TailLines: 3, LimitBytes: 9, Since: now.Add(-time.Minute)}},
		{name: "since time", in: corev1.PodLogOptions{SinceTime: &metav1.Time{Time: now}}, want: Options{TailLines: -1, Since: now}},
		{name: "stderr", in: corev1.PodLogOptions{Stream: ptr.To("Stderr")}, want: Options{TailLines: -1, Stream: Stderr}},
		{name: "all", in: corev1.PodLogOptions{Stream: ptr.To("All")}, want: Options{TailLines: -1}},
		{name: "sinceSeconds beyond a Duration reads everything", in: corev1.PodLogOptions{SinceSeconds: ptr.To[int64](math.MaxInt64)},
			want: Options{TailLines: -1}},
		{name: "longest sinceSeconds a Duration holds", in: corev1.PodLogOptions{SinceSeconds: ptr.To(maxSinceSeconds)},
			want: Options{TailLines: -1, Since: now.Add(-time.Duration(maxSinceSeconds) * time.Second)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, FromPodLogOptions(&tc.in, now)); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
		})
	}
}
