package soak

import (
	"fmt"
	"strconv"
	"strings"
)

// Figure is one measured value of a scenario.
type Figure struct {
	Name  string
	Value float64
	Unit  string
}

// Outcome is one kubelet's run of one scenario: its figures, the promises
// it broke, and the error that stopped it (if any).
type Outcome struct {
	Figures []Figure
	Broken  []string
	Err     error
}

func (o *Outcome) add(name, unit string, v float64) {
	o.Figures = append(o.Figures, Figure{Name: name, Value: v, Unit: unit})
}

// promise records a broken promise when ok is false.
func (o *Outcome) promise(ok bool, format string, args ...any) {
	if !ok {
		o.Broken = append(o.Broken, fmt.Sprintf(format, args...))
	}
}

// Report is a run's outcomes by scenario and kubelet.
type Report struct {
	Kubelets  []string
	Scenarios []string
	Outcomes  map[string]map[string]*Outcome // scenario -> kubelet
}

func (r *Report) set(scenario, kubelet string, o *Outcome) {
	if r.Outcomes == nil {
		r.Outcomes = map[string]map[string]*Outcome{}
	}
	if r.Outcomes[scenario] == nil {
		r.Outcomes[scenario] = map[string]*Outcome{}
		r.Scenarios = append(r.Scenarios, scenario)
	}
	r.Outcomes[scenario][kubelet] = o
}

// Markdown renders the report: per scenario, a table of its figures with
// one column per kubelet, then what each kubelet broke or failed on.
func (r *Report) Markdown() string {
	var b strings.Builder
	for _, s := range r.Scenarios {
		fmt.Fprintf(&b, "### %s\n\n| figure | %s |\n|---|%s\n", s, strings.Join(r.Kubelets, " | "), strings.Repeat("---|", len(r.Kubelets)))
		var names []string
		units := map[string]string{}
		values := map[string]map[string]float64{}
		for _, k := range r.Kubelets {
			o := r.Outcomes[s][k]
			if o == nil {
				continue
			}
			for _, f := range o.Figures {
				if values[f.Name] == nil {
					names = append(names, f.Name)
					values[f.Name] = map[string]float64{}
					units[f.Name] = f.Unit
				}
				values[f.Name][k] = f.Value
			}
		}
		for _, n := range names {
			label := n
			if units[n] != "" {
				label += " (" + units[n] + ")"
			}
			cells := make([]string, len(r.Kubelets))
			for i, k := range r.Kubelets {
				cells[i] = "—"
				if v, ok := values[n][k]; ok {
					cells[i] = strconv.FormatFloat(v, 'f', -1, 64)
					if v != float64(int64(v)) {
						cells[i] = strconv.FormatFloat(v, 'f', 2, 64)
					}
				}
			}
			fmt.Fprintf(&b, "| %s | %s |\n", label, strings.Join(cells, " | "))
		}
		b.WriteString("\n")
		for _, k := range r.Kubelets {
			o := r.Outcomes[s][k]
			if o == nil {
				continue
			}
			if o.Err != nil {
				fmt.Fprintf(&b, "- %s stopped: %v\n", k, o.Err)
			}
			for _, p := range o.Broken {
				fmt.Fprintf(&b, "- %s broke: %s\n", k, p)
			}
			if o.Err == nil && len(o.Broken) == 0 {
				fmt.Fprintf(&b, "- %s kept every promise\n", k)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}
