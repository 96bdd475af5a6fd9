package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/onsi/ginkgo/v2/types"
)

// Summary is the outcome of a run, spec by spec. Names are ginkgo's full
// spec texts (container texts and the It text), sorted.
type Summary struct {
	Passed []string
	// Failed holds every spec in a failure state (failed, timed out,
	// aborted, panicked, interrupted), and suite nodes (BeforeSuite and the
	// like) that failed: their failure fails every spec.
	Failed []Outcome
	// Skipped holds specs that were selected but skipped themselves at run
	// time (e2eskipper: a missing provider feature, say), with the reason.
	Skipped []Outcome
	// NotSelected counts the specs the focus and skip expressions left out.
	NotSelected int
}

// Outcome is one spec with the first line of its failure or skip message.
type Outcome struct {
	Name, Reason string
}

// Summarize sorts every spec of the reports (one per ginkgo run; ginkgo
// writes one for a suite) into a Summary.
func Summarize(reports []types.Report) Summary {
	var s Summary
	for _, r := range reports {
		for _, spec := range r.SpecReports {
			add(&s, spec)
		}
	}
	sort.Strings(s.Passed)
	byName := func(o []Outcome) func(i, j int) bool {
		return func(i, j int) bool { return o[i].Name < o[j].Name }
	}
	sort.Slice(s.Failed, byName(s.Failed))
	sort.Slice(s.Skipped, byName(s.Skipped))
	return s
}

func add(s *Summary, spec types.SpecReport) {
	name := spec.FullText()
	if spec.LeafNodeType != types.NodeTypeIt {
		// Suite and cleanup nodes: only their failures are news.
		if !spec.Failed() {
			return
		}
		name = "[" + spec.LeafNodeType.String() + "] " + spec.LeafNodeLocation.String()
	}
	switch {
	case spec.Failed():
		s.Failed = append(s.Failed, Outcome{Name: name, Reason: spec.State.String() + ": " + firstLine(spec.Failure.Message)})
	case spec.State == types.SpecStatePassed:
		s.Passed = append(s.Passed, name)
	case spec.State == types.SpecStateSkipped && spec.Failure.Message != "":
		s.Skipped = append(s.Skipped, Outcome{Name: name, Reason: firstLine(spec.Failure.Message)})
	default:
		// Skipped without a message (left out by focus or skip) or pending.
		s.NotSelected++
	}
}

func firstLine(msg string) string {
	msg = strings.TrimSpace(msg)
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = strings.TrimSpace(msg[:i])
	}
	return msg
}

// Write prints the summary: one line a spec (PASSED, FAILED, SKIPPED), then
// the totals.
func (s Summary) Write(w io.Writer) error {
	var b strings.Builder
	for _, o := range s.Failed {
		fmt.Fprintf(&b, "FAILED   %s\n         %s\n", o.Name, o.Reason)
	}
	for _, name := range s.Passed {
		fmt.Fprintf(&b, "PASSED   %s\n", name)
	}
	for _, o := range s.Skipped {
		fmt.Fprintf(&b, "SKIPPED  %s\n         %s\n", o.Name, o.Reason)
	}
	fmt.Fprintf(&b, "not selected by focus/skip: %d\n", s.NotSelected)
	fmt.Fprintf(&b, "%d passed, %d failed, %d skipped\n", len(s.Passed), len(s.Failed), len(s.Skipped))
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	return nil
}
