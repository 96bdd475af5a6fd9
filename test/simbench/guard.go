package simbench

import (
	"context"
	"fmt"
	"time"
)

// guardEvery is how often the memory guard reads MemAvailable.
const guardEvery = 500 * time.Millisecond

// memoryFloorError stops a run whose memory took MemAvailable under the
// floor.
type memoryFloorError struct {
	avail, floor uint64
	// nodes is how many nodes' worth of processes had been started, and
	// rss and pss their summed VmRSS and PSS then.
	nodes    int
	rss, pss uint64
}

func (e *memoryFloorError) Error() string {
	return fmt.Sprintf("MemAvailable %.0f MiB under the floor of %.0f MiB with %d nodes started (RSS %.0f MiB, PSS %.0f MiB)",
		float64(e.avail)/(1<<20), float64(e.floor)/(1<<20), e.nodes, float64(e.rss)/(1<<20), float64(e.pss)/(1<<20))
}

// perNode is the memory (PSS) a started node took.
func (e *memoryFloorError) perNode() uint64 {
	if e.nodes < 1 {
		return 0
	}
	return e.pss / uint64(e.nodes)
}

// guardMemory reads MemAvailable every guardEvery until ctx ends and fails
// the run when it is under floor; started says how many nodes' worth of
// processes run.
func guardMemory(ctx context.Context, floor uint64, procs *procSet, started func() int, fail context.CancelCauseFunc) {
	tick := time.NewTicker(guardEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		avail, err := memAvailable()
		if err != nil {
			fail(fmt.Errorf("read MemAvailable: %w", err))
			return
		}
		if avail < floor {
			pids := procs.pids()
			fail(&memoryFloorError{avail: avail, floor: floor, nodes: started(), rss: rssNow(pids), pss: pssNow(pids)})
			return
		}
	}
}
