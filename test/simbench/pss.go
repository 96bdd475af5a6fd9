package simbench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// pssEvery is how often a window reads the processes' PSS.
const pssEvery = 5 * time.Second

// The proportional set size: a process's resident pages, each shared page
// divided by the number of processes that map it. For kubemark's hollow
// nodes, one process a node running the same 90 MB binary, the sum of
// their VmRSS counts the binary's shared text once a node, the sum of
// their PSS once in all: what the nodes cost the machine. test/bench reads
// VmRSS only, one process at a time; smaps_rollup is read here.

// parsePss returns Pss in bytes from the content of /proc/<pid>/smaps_rollup.
// It is pure.
func parsePss(rollup []byte) (uint64, error) {
	for line := range strings.SplitSeq(string(rollup), "\n") {
		rest, ok := strings.CutPrefix(line, "Pss:")
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
	return 0, fmt.Errorf("parse smaps_rollup: no Pss")
}

// pssNow is the summed PSS of the processes now; those gone or unreadable
// are left out.
func pssNow(pids []int) uint64 {
	var sum uint64
	for _, pid := range pids {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
		if err != nil {
			continue
		}
		if pss, err := parsePss(b); err == nil {
			sum += pss
		}
	}
	return sum
}

// samplePss reads the processes' summed PSS now and every pssEvery until
// ctx ends, and returns the mean of the readings.
func samplePss(ctx context.Context, pids []int) uint64 {
	var sum, n uint64
	tick := time.NewTicker(pssEvery)
	defer tick.Stop()
	for {
		sum, n = sum+pssNow(pids), n+1
		select {
		case <-ctx.Done():
			return sum / n
		case <-tick.C:
		}
	}
}
