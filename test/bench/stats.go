package bench

import (
	"math"
	"slices"
)

// Dist summarizes a distribution of samples (seconds, bytes, ...).
type Dist struct {
	N      int     `json:"n"`
	Median float64 `json:"median"`
	P50    float64 `json:"p50"`
	P90    float64 `json:"p90"`
	P99    float64 `json:"p99"`
	Max    float64 `json:"max"`
}

// Summarize returns the distribution of samples; the zero Dist for none.
// Percentiles are nearest-rank (the smallest sample with at least p% of
// the samples at or below it); the median is the mean of the two middle
// samples for an even count, so it can differ from p50.
func Summarize(samples []float64) Dist {
	if len(samples) == 0 {
		return Dist{}
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	n := len(s)
	median := s[n/2]
	if n%2 == 0 {
		median = (s[n/2-1] + s[n/2]) / 2
	}
	return Dist{N: n, Median: median, P50: nearestRank(s, 50), P90: nearestRank(s, 90), P99: nearestRank(s, 99), Max: s[n-1]}
}

// nearestRank is the p-th percentile of sorted samples.
func nearestRank(sorted []float64, p float64) float64 {
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[max(rank, 1)-1]
}
