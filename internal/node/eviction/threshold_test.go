package eviction

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
)

func q(s string) *resource.Quantity { v := resource.MustParse(s); return &v }

func TestParseThresholds(t *testing.T) {
	tests := []struct {
		name    string
		in      Settings
		want    []Threshold
		wantErr bool
	}{
		{name: "none"},
		{name: "hard quantity and percentage", in: Settings{Hard: map[string]string{"memory.available": "100Mi", "nodefs.available": "10%"}},
			want: []Threshold{{Signal: SignalMemoryAvailable, Value: Value{Quantity: q("100Mi")}}, {Signal: SignalNodeFsAvailable, Value: Value{Percentage: 0.1}}}},
		{name: "0% and 100% ignored", in: Settings{Hard: map[string]string{"memory.available": "0%", "nodefs.available": "100%"}}},
		{name: "soft with grace", in: Settings{Soft: map[string]string{"memory.available": "1Gi"}, SoftGracePeriod: map[string]string{"memory.available": "90s"}},
			want: []Threshold{{Signal: SignalMemoryAvailable, Value: Value{Quantity: q("1Gi")}, GracePeriod: 90 * time.Second}}},
		{name: "soft without grace", in: Settings{Soft: map[string]string{"memory.available": "1Gi"}}, wantErr: true},
		{name: "minimum reclaim on hard and soft", in: Settings{Hard: map[string]string{"imagefs.available": "15%"}, Soft: map[string]string{"imagefs.available": "20%"},
			SoftGracePeriod: map[string]string{"imagefs.available": "1m"}, MinimumReclaim: map[string]string{"imagefs.available": "2Gi"}},
			want: []Threshold{{Signal: SignalImageFsAvailable, Value: Value{Percentage: 0.15}, MinReclaim: &Value{Quantity: q("2Gi")}},
				{Signal: SignalImageFsAvailable, Value: Value{Percentage: 0.2}, GracePeriod: time.Minute, MinReclaim: &Value{Quantity: q("2Gi")}}}},
		{name: "allocatable copies hard memory", in: Settings{Hard: map[string]string{"memory.available": "100Mi"}, EnforceNodeAllocatable: []string{"pods"}},
			want: []Threshold{{Signal: SignalAllocatableMemoryAvailable, Value: Value{Quantity: q("100Mi")}}, {Signal: SignalMemoryAvailable, Value: Value{Quantity: q("100Mi")}}}},
		{name: "unknown signal", in: Settings{Hard: map[string]string{"cpu.available": "1"}}, wantErr: true},
		{name: "negative quantity", in: Settings{Hard: map[string]string{"memory.available": "-1"}}, wantErr: true},
		{name: "zero quantity", in: Settings{Hard: map[string]string{"memory.available": "0"}}, wantErr: true},
		{name: "over 100%", in: Settings{Hard: map[string]string{"memory.available": "101%"}}, wantErr: true},
		{name: "bad grace", in: Settings{SoftGracePeriod: map[string]string{"memory.available": "-1s"}}, wantErr: true},
		{name: "zero percent reclaim", in: Settings{MinimumReclaim: map[string]string{"memory.available": "0%"}}, wantErr: true},
		{name: "negative reclaim", in: Settings{MinimumReclaim: map[string]string{"memory.available": "-1Mi"}}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseThresholds(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
				t.Errorf("thresholds (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWithContainerFs(t *testing.T) {
	node := Threshold{Signal: SignalNodeFsAvailable, Value: Value{Percentage: 0.1}}
	nodeInodes := Threshold{Signal: SignalNodeFsInodesFree, Value: Value{Percentage: 0.05}, GracePeriod: time.Minute}
	image := Threshold{Signal: SignalImageFsAvailable, Value: Value{Percentage: 0.15}}
	given := Threshold{Signal: SignalContainerFsAvailable, Value: Value{Percentage: 0.5}}
	as := func(t Threshold, s Signal) Threshold { t.Signal = s; return t }
	tests := []struct {
		name      string
		dedicated bool
		want      []Threshold
	}{
		{name: "one filesystem: nodefs's", want: []Threshold{node, nodeInodes, image,
			as(node, SignalContainerFsAvailable), as(nodeInodes, SignalContainerFsInodesFree)}},
		{name: "dedicated imagefs: imagefs's", dedicated: true, want: []Threshold{node, nodeInodes, image, as(image, SignalContainerFsAvailable)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := WithContainerFs([]Threshold{node, nodeInodes, image, given}, tt.dedicated)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("thresholds (-want +got):\n%s", diff)
			}
		})
	}
}
