package eviction

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
)

// WriteText writes the explanation as plain-text tables, one per
// section, for a person at a terminal.
func (e Explanation) WriteText(w io.Writer) error {
	var b bytes.Buffer
	if !e.Observed {
		fmt.Fprintf(&b, "Eviction: %s.\n", e.Message)
		_, err := w.Write(b.Bytes())
		return err
	}
	fmt.Fprintf(&b, "Eviction manager, last pass at %s (dedicated image filesystem: %t)\n", e.ObservedAt, e.DedicatedImageFs != nil && *e.DedicatedImageFs)
	table(&b, "\nSIGNALS", []string{"SIGNAL", "AVAILABLE", "CAPACITY", "AVAILABLE%", "OBSERVED AT"}, len(e.Signals), func(i int) []string {
		s := e.Signals[i]
		return []string{string(s.Signal), s.Available, s.Capacity, pct(s.AvailablePercent), dash(s.ObservedAt)}
	})
	table(&b, "\nTHRESHOLDS", []string{"SIGNAL", "KIND", "VALUE", "QUANTITY", "GRACE", "MET", "STATUS", "SINCE", "LEFT", "LEFT%"},
		len(e.Thresholds), func(i int) []string {
			t := e.Thresholds[i]
			return []string{string(t.Signal), t.Kind, t.Value, dash(t.Quantity), t.GracePeriod, strconv.FormatBool(t.Met),
				t.Status, dash(t.Since), dash(t.Left), pct(t.LeftPercent)}
		})
	table(&b, "\nCONDITIONS", []string{"TYPE", "STATUS", "LAST OBSERVED AT"}, len(e.Conditions), func(i int) []string {
		c := e.Conditions[i]
		return []string{string(c.Type), string(c.Status), dash(c.LastObservedAt)}
	})
	switch r := e.Reclaim; {
	case r == nil:
		fmt.Fprintf(&b, "\nRECLAIM: nothing to reclaim\n")
	case r.Next == nil:
		fmt.Fprintf(&b, "\nRECLAIM: %s (%s), node-level reclaim first: %t; no pod can be evicted\n", r.Signal, r.Resource, r.NodeReclaimFirst)
	default:
		fmt.Fprintf(&b, "\nRECLAIM: %s (%s), node-level reclaim first: %t; next eviction %s, grace %ds: %s\n",
			r.Signal, r.Resource, r.NodeReclaimFirst, r.Next.Pod, r.Next.GracePeriodSeconds, r.Next.Message)
	}
	evictions(&b, "\nLOCAL STORAGE EVICTIONS (before any threshold)", e.LocalStorage)
	evictions(&b, "\nEVICTED BY THE LAST PASS", e.Evicted)
	for _, r := range e.Rankings {
		table(&b, fmt.Sprintf("\nEVICTION ORDER FOR %s (%s)", r.Signal, r.Resource),
			[]string{"#", "POD", "QOS", "PRIORITY", "USAGE", "REQUEST", "ABOVE REQUEST", "NEXT", "REASON"}, len(r.Pods), func(i int) []string {
				p := r.Pods[i]
				next := ""
				if p.Next {
					next = "*"
				}
				return []string{strconv.Itoa(p.Position), p.Pod, string(p.QOSClass), strconv.Itoa(int(p.Priority)),
					dash(p.Usage), dash(p.Request), dash(p.AboveRequest), next, p.Reason}
			})
	}
	_, err := w.Write(b.Bytes())
	return err
}

// table writes a titled table of n rows; "(none)" when n is zero.
func table(b *bytes.Buffer, title string, header []string, n int, row func(int) []string) {
	fmt.Fprintln(b, title)
	if n == 0 {
		fmt.Fprintln(b, "(none)")
		return
	}
	tw := tabwriter.NewWriter(b, 0, 4, 2, ' ', 0)
	line := func(cells []string) {
		for i, c := range cells {
			if i > 0 {
				fmt.Fprint(tw, "\t")
			}
			fmt.Fprint(tw, c)
		}
		fmt.Fprintln(tw)
	}
	line(header)
	for i := range n {
		line(row(i))
	}
	_ = tw.Flush()
}

func evictions(b *bytes.Buffer, title string, evs []EvictionView) {
	if len(evs) == 0 {
		return
	}
	table(b, title, []string{"POD", "SIGNAL", "GRACE", "MESSAGE"}, len(evs), func(i int) []string {
		ev := evs[i]
		return []string{ev.Pod, string(ev.Signal), strconv.FormatInt(ev.GracePeriodSeconds, 10) + "s", ev.Message}
	})
}

func pct(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) + "%" }

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
