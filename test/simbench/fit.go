package simbench

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// parseMemAvailable returns MemAvailable in bytes from the content of
// /proc/meminfo. It is pure.
func parseMemAvailable(meminfo []byte) (uint64, error) {
	for line := range strings.SplitSeq(string(meminfo), "\n") {
		rest, ok := strings.CutPrefix(line, "MemAvailable:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("parse %q", line)
		}
		kb, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parse %q: %w", line, err)
		}
		return kb * 1024, nil
	}
	return 0, fmt.Errorf("parse /proc/meminfo: no MemAvailable")
}

// memAvailable reads MemAvailable now.
func memAvailable() (uint64, error) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	return parseMemAvailable(b)
}

// nodeEstimate is the most memory per node (PSS, what the nodes cost the
// machine) that an earlier run of sim measured, in either window or when
// it was stopped at the floor, in bytes; false when none did. It is pure.
func nodeEstimate(earlier []Result, sim string) (uint64, bool) {
	var est uint64
	for _, r := range earlier {
		if r.Simulator != sim || r.Nodes < 1 {
			continue
		}
		for _, w := range []*Window{r.Idle, r.Busy} {
			if w != nil {
				est = max(est, w.PSSMeanBytes/uint64(r.Nodes))
			}
		}
		est = max(est, r.NodeBytes)
	}
	return est, est > 0
}

// fits reports whether nodes simulated nodes of perNode bytes each leave
// MemAvailable (avail, bytes) at or above floor. It is pure.
func fits(nodes int, perNode, avail, floor uint64) bool {
	return avail >= floor && uint64(nodes)*perNode <= avail-floor
}

// noFitNote is the table's note for a size that does not fit, perNode
// the PSS a node.
func noFitNote(perNode uint64) string {
	return fmt.Sprintf("did not fit: ~%.0f MiB a node", float64(perNode)/(1<<20))
}
