package simbench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/berthk8s/berth/test/bench"
)

// measureWindow samples the processes once a second for d (test/bench's
// reader of /proc) and their PSS every pssEvery, while it measures the
// share of the CPU that processes outside the harness's tree use
// (test/bench's idle check). Requests are
// counted later, from the audit log.
func measureWindow(ctx context.Context, pids []int, d time.Duration) (Window, error) {
	w := Window{Start: time.Now(), Procs: len(pids)}
	others := make(chan error, 1)
	go func() {
		share, err := bench.CheckIdle(ctx, d, 0)
		w.OthersShare = share
		others <- err
	}()
	pssCtx, stopPss := context.WithCancel(ctx)
	pss := make(chan uint64, 1)
	go func() { pss <- samplePss(pssCtx, pids) }()
	samples, err := bench.SampleProcs(ctx, d, pids...)
	stopPss()
	w.PSSMeanBytes = <-pss
	if othersErr := <-others; err == nil && othersErr != nil {
		err = fmt.Errorf("measure the machine's load: %w", othersErr)
	}
	if err != nil {
		return Window{}, err
	}
	w.Seconds = time.Since(w.Start).Seconds()
	w.RSSMeanBytes, w.RSSMaxBytes, w.CPUSeconds, err = summarize(samples, pids)
	return w, err
}

// summarize sums the processes' samples, taken at the same instants:
// the mean and the largest of the summed RSS, and the CPU seconds all
// used. It is pure.
func summarize(samples map[int][]bench.ProcSample, pids []int) (rssMean, rssMax uint64, cpu float64, err error) {
	if len(pids) == 0 {
		return 0, 0, 0, errors.New("no processes sampled")
	}
	n := len(samples[pids[0]])
	if n == 0 {
		return 0, 0, 0, errors.New("no samples")
	}
	var total uint64
	for i := range n {
		var sum uint64
		for _, pid := range pids {
			s := samples[pid]
			if len(s) != n {
				return 0, 0, 0, fmt.Errorf("process %d: %d samples, want %d", pid, len(s), n)
			}
			sum += s[i].RSSBytes
		}
		total += sum
		rssMax = max(rssMax, sum)
	}
	for _, pid := range pids {
		cpu += bench.CPUSeconds(samples[pid])
	}
	return total / uint64(n), rssMax, cpu, nil
}

// rssNow is the summed VmRSS of the processes now; those gone are left out.
func rssNow(pids []int) uint64 {
	var sum uint64
	for _, pid := range pids {
		if rss, err := bench.RSSBytes(pid); err == nil {
			sum += rss
		}
	}
	return sum
}
