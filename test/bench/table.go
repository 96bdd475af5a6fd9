package bench

import (
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Column names: the two kubelets and the CRI floor.
const (
	ColBerth    = "berth"
	ColUpstream = "upstream"
	ColFloor    = "floor"
)

// Measure is one measured quantity.
type Measure struct {
	Key   string // the key of its samples in Samples and in the JSON
	Title string
	Unit  string
	// Dist: the samples are a distribution, shown as median, p50, p99 and
	// max rows; otherwise one row with the median of the samples.
	Dist bool
}

// Samples holds raw samples: measure key -> column -> samples.
type Samples map[string]map[string][]float64

// Add appends samples of a measure for a column.
func (s Samples) Add(key, column string, v ...float64) {
	if s[key] == nil {
		s[key] = map[string][]float64{}
	}
	s[key][column] = append(s[key][column], v...)
}

// Table renders one row per figure: the value for berth, the upstream
// kubelet, their ratio and the CRI floor; "-" where nothing was measured.
func Table(measures []Measure, s Samples) string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "figure\tunit\tberth\tupstream\tberth/upstream\tfloor (CRI)\t")
	for _, m := range measures {
		stats := []string{"median"}
		if m.Dist {
			stats = []string{"median", "p50", "p99", "max"}
		}
		for _, st := range stats {
			name := m.Title
			if m.Dist {
				name += " (" + st + ")"
			}
			berth, okB := stat(s[m.Key][ColBerth], st)
			up, okU := stat(s[m.Key][ColUpstream], st)
			floor, okF := stat(s[m.Key][ColFloor], st)
			ratio, okR := 0.0, okB && okU && up != 0
			if okR {
				ratio = berth / up
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t\n", name, m.Unit, num(berth, okB), num(up, okU), num(ratio, okR), num(floor, okF))
		}
	}
	_ = w.Flush()
	return b.String()
}

// stat picks one statistic of samples; false when there are none.
func stat(samples []float64, which string) (float64, bool) {
	if len(samples) == 0 {
		return 0, false
	}
	d := Summarize(samples)
	switch which {
	case "p50":
		return d.P50, true
	case "p99":
		return d.P99, true
	case "max":
		return d.Max, true
	}
	return d.Median, true
}

// num formats v with four significant digits, or "-".
func num(v float64, ok bool) string {
	if !ok {
		return "-"
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}
