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

// merge adds every sample of o to s.
func (s Samples) merge(o Samples) {
	for key, cols := range o {
		for col, v := range cols {
			s.Add(key, col, v...)
		}
	}
}

// repeatKey is the key of repeat rep's create → Running samples of the
// burst of b pods (burst<b>_pod holds every repeat's).
func repeatKey(b, rep int) string { return fmt.Sprintf("burst%d_pod_r%d", b, rep) }

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
	case "p90":
		return d.P90, true
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

// repeatStats are the statistics of RepeatTable.
var repeatStats = []string{"p50", "p90", "p99", "max"}

// RepeatTable renders create → Running per pod, per burst size and
// repeat, for the CRI floor and both kubelets in every configuration side
// by side (with berth/upstream in each): one row per statistic of
// repeatStats. byConf holds each configuration's samples (the floor's in
// each; the first configuration's are shown). It is pure.
func RepeatTable(bursts []int, repeats int, confs []string, byConf map[string]Samples) string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "pods\trepeat\tstat (s)\tfloor (CRI)\t"
	for _, c := range confs {
		head += c + ": berth\t" + c + ": upstream\t" + c + ": ratio\t"
	}
	fmt.Fprintln(w, head)
	var floor Samples
	if len(confs) > 0 {
		floor = byConf[confs[0]]
	}
	for _, n := range bursts {
		for rep := 1; rep <= repeats; rep++ {
			key := repeatKey(n, rep)
			for _, st := range repeatStats {
				f, okF := stat(floor[key][ColFloor], st)
				row := fmt.Sprintf("%d\t%d\t%s\t%s\t", n, rep, st, num(f, okF))
				for _, c := range confs {
					berth, okB := stat(byConf[c][key][ColBerth], st)
					up, okU := stat(byConf[c][key][ColUpstream], st)
					ratio, okR := 0.0, okB && okU && up != 0
					if okR {
						ratio = berth / up
					}
					row += num(berth, okB) + "\t" + num(up, okU) + "\t" + num(ratio, okR) + "\t"
				}
				fmt.Fprintln(w, row)
			}
		}
	}
	_ = w.Flush()
	return b.String()
}

// HeapTable lists each heap point's HeapInuse and its top functions by
// in-use bytes (flat), one block per point. It is pure.
func HeapTable(points []HeapPoint) string {
	var b strings.Builder
	for _, p := range points {
		fmt.Fprintf(&b, "berth heap, %s, %d pods: %s MiB in use (%s)\n", p.Config, p.Pods, num(p.InuseMiB, true), p.File)
		w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		for _, e := range p.Top {
			fmt.Fprintf(w, "  %s MiB\t%s\n", num(e.Bytes/(1<<20), true), e.Func)
		}
		_ = w.Flush()
	}
	return b.String()
}
