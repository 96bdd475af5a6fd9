package bench

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSummarize(t *testing.T) {
	hundred := make([]float64, 100)
	for i := range hundred {
		hundred[i] = float64(100 - i) // 100 .. 1, unsorted
	}
	tests := []struct {
		name    string
		samples []float64
		want    Dist
	}{
		{name: "none", want: Dist{}},
		{name: "one", samples: []float64{3}, want: Dist{N: 1, Median: 3, P50: 3, P90: 3, P99: 3, Max: 3}},
		{name: "even count: median between the middle two", samples: []float64{4, 1, 3, 2},
			want: Dist{N: 4, Median: 2.5, P50: 2, P90: 4, P99: 4, Max: 4}},
		{name: "odd count", samples: []float64{5, 1, 9}, want: Dist{N: 3, Median: 5, P50: 5, P90: 9, P99: 9, Max: 9}},
		{name: "hundred", samples: hundred, want: Dist{N: 100, Median: 50.5, P50: 50, P90: 90, P99: 99, Max: 100}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]float64(nil), tt.samples...)
			if diff := cmp.Diff(tt.want, Summarize(tt.samples)); diff != "" {
				t.Errorf("Summarize (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(in, tt.samples); diff != "" {
				t.Errorf("Summarize modified its input (-before +after):\n%s", diff)
			}
		})
	}
}
