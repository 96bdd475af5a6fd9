package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/onsi/ginkgo/v2/types"
)

func spec(state types.SpecState, msg string, texts ...string) types.SpecReport {
	return types.SpecReport{
		LeafNodeType:            types.NodeTypeIt,
		ContainerHierarchyTexts: texts[:len(texts)-1],
		LeafNodeText:            texts[len(texts)-1],
		State:                   state,
		Failure:                 types.Failure{Message: msg},
	}
}

func TestSummarize(t *testing.T) {
	tests := []struct {
		name  string
		specs []types.SpecReport
		want  Summary
	}{{
		name: "passed, sorted by full text",
		specs: []types.SpecReport{
			spec(types.SpecStatePassed, "", "[sig-node] Pods", "should be updated"),
			spec(types.SpecStatePassed, "", "[sig-node] Pods", "should get a host IP"),
			spec(types.SpecStatePassed, "", "[sig-node] Containers", "should use the image defaults"),
		},
		want: Summary{Passed: []string{
			"[sig-node] Containers should use the image defaults",
			"[sig-node] Pods should be updated",
			"[sig-node] Pods should get a host IP",
		}},
	}, {
		name: "failure states keep the first line of the message",
		specs: []types.SpecReport{
			spec(types.SpecStateFailed, "\n  expected Running\ngot Pending\n", "[sig-node] Pods", "a"),
			spec(types.SpecStateTimedout, "timed out", "[sig-node] Pods", "b"),
			spec(types.SpecStatePanicked, "boom", "[sig-node] Pods", "c"),
		},
		want: Summary{Failed: []Outcome{
			{Name: "[sig-node] Pods a", Reason: "failed: expected Running"},
			{Name: "[sig-node] Pods b", Reason: "timedout: timed out"},
			{Name: "[sig-node] Pods c", Reason: "panicked: boom"},
		}},
	}, {
		name: "skipped at run time has a reason; left out by focus has none",
		specs: []types.SpecReport{
			spec(types.SpecStateSkipped, "Only supported for providers [gce]\nmore", "[sig-node] X", "y"),
			spec(types.SpecStateSkipped, "", "[sig-apps] Deployment", "z"),
			spec(types.SpecStatePending, "", "[sig-apps] Deployment", "p"),
		},
		want: Summary{
			Skipped:     []Outcome{{Name: "[sig-node] X y", Reason: "Only supported for providers [gce]"}},
			NotSelected: 2,
		},
	}, {
		name: "suite nodes count only when they fail",
		specs: []types.SpecReport{
			{LeafNodeType: types.NodeTypeSynchronizedBeforeSuite, State: types.SpecStatePassed},
			{
				LeafNodeType:     types.NodeTypeSynchronizedBeforeSuite,
				LeafNodeLocation: types.CodeLocation{FileName: "e2e.go", LineNumber: 7},
				State:            types.SpecStateFailed,
				Failure:          types.Failure{Message: "no nodes"},
			},
		},
		want: Summary{Failed: []Outcome{{Name: "[SynchronizedBeforeSuite] e2e.go:7", Reason: "failed: no nodes"}}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Summarize([]types.Report{{SpecReports: tt.specs}})
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Summarize() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReadReport reads a report in the form ginkgo writes it (states as
// strings), cut down from a real run.
func TestReadReport(t *testing.T) {
	s, err := readReport("testdata/report.json")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := s.Write(&b); err != nil {
		t.Fatal(err)
	}
	want := `FAILED   [sig-node] Pods should be updated
         failed: pod not updated
PASSED   [sig-node] Pods should get a host IP [NodeConformance] [Conformance]
not selected by focus/skip: 1
1 passed, 1 failed, 0 skipped
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("summary mismatch (-want +got):\n%s", diff)
	}
}
