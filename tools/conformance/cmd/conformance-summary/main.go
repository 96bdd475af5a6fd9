// Command conformance-summary reads the JSON report ginkgo writes
// (--json-report) for a run of e2e.test and writes a per-spec summary:
// every spec that ran, passed or failed with the first line of its failure,
// every spec skipped at run time with its reason, and the count of specs the
// focus and skip expressions left out. Its last line is
// "N passed, N failed, N skipped". hack/conformance.sh runs it.
//
// It exits 1 when a spec failed, 2 when the report cannot be read.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/onsi/ginkgo/v2/types"
)

func main() {
	report := flag.String("report", "", "ginkgo JSON report (required)")
	out := flag.String("o", "", "summary file to write (default: standard output only)")
	flag.Parse()
	if *report == "" {
		fmt.Fprintln(os.Stderr, "conformance-summary: -report is required")
		os.Exit(2)
	}
	s, err := readReport(*report)
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformance-summary:", err)
		os.Exit(2)
	}
	var w io.Writer = os.Stdout
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			fmt.Fprintf(os.Stderr, "conformance-summary: create summary %q: %v\n", *out, err)
			os.Exit(2)
		}
		defer f.Close()
		w = io.MultiWriter(os.Stdout, f)
	}
	if err := s.Write(w); err != nil {
		fmt.Fprintln(os.Stderr, "conformance-summary:", err)
		os.Exit(2)
	}
	if len(s.Failed) > 0 {
		os.Exit(1)
	}
}

func readReport(path string) (Summary, error) {
	f, err := os.Open(path)
	if err != nil {
		return Summary{}, fmt.Errorf("open report %q: %w", path, err)
	}
	defer f.Close()
	var reports []types.Report
	if err := json.NewDecoder(f).Decode(&reports); err != nil {
		return Summary{}, fmt.Errorf("decode report %q: %w", path, err)
	}
	return Summarize(reports), nil
}
