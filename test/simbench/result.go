package simbench

import (
	"time"
)

// Status is how a run ended.
type Status string

const (
	// StatusOK: every figure was measured.
	StatusOK Status = "ok"
	// StatusNoFit: the run was not started, or was stopped, because the
	// simulator's memory would have taken MemAvailable under the floor.
	StatusNoFit Status = "did not fit"
	// StatusTimeout: not every node became Ready, or not every pod
	// Running, in time.
	StatusTimeout Status = "timed out"
	// StatusFailed: a process exited or a step failed; Error says which.
	StatusFailed Status = "failed"
	// StatusInterrupted: the harness was stopped (Ctrl-C).
	StatusInterrupted Status = "interrupted"
)

// Window is one measuring window: the simulator's processes sampled once
// a second, the machine's load and the simulator's API requests.
type Window struct {
	Start   time.Time `json:"start"`
	Seconds float64   `json:"seconds"`
	// Procs is how many processes were sampled (one a node for kubemark).
	Procs int `json:"procs"`
	// RSSMeanBytes and RSSMaxBytes are the mean and the largest of the
	// per-second sums of the processes' VmRSS.
	RSSMeanBytes uint64 `json:"rssMeanBytes"`
	RSSMaxBytes  uint64 `json:"rssMaxBytes"`
	// PSSMeanBytes is the mean of the summed PSS, read every pssEvery:
	// shared pages counted once in all the processes (see pss.go).
	PSSMeanBytes uint64 `json:"pssMeanBytes"`
	// CPUSeconds is the CPU time (user and system) the processes used.
	CPUSeconds float64 `json:"cpuSeconds"`
	// Requests is the number of API requests from the simulator's
	// identity the API server received in the window.
	Requests int `json:"requests"`
	// OthersShare is the share of the machine's CPU (all cores, 0 to 1)
	// that processes other than the harness and its children used.
	OthersShare float64 `json:"othersShare"`
}

// End is when the window closed.
func (w Window) End() time.Time { return w.Start.Add(time.Duration(w.Seconds * float64(time.Second))) }

// RSSMiBPerNode is the mean resident memory per simulated node, in MiB.
func (w Window) RSSMiBPerNode(nodes int) float64 {
	if nodes < 1 {
		return 0
	}
	return float64(w.RSSMeanBytes) / (1 << 20) / float64(nodes)
}

// PSSMiBPerNode is the mean proportional set size per simulated node, in
// MiB.
func (w Window) PSSMiBPerNode(nodes int) float64 {
	if nodes < 1 {
		return 0
	}
	return float64(w.PSSMeanBytes) / (1 << 20) / float64(nodes)
}

// MillicoresPerNode is the CPU per simulated node over the window, in
// thousandths of a core.
func (w Window) MillicoresPerNode(nodes int) float64 {
	if nodes < 1 || w.Seconds <= 0 {
		return 0
	}
	return w.CPUSeconds / w.Seconds * 1000 / float64(nodes)
}

// RequestsPerNodeMinute is the API requests per simulated node per
// minute over the window.
func (w Window) RequestsPerNodeMinute(nodes int) float64 {
	if nodes < 1 || w.Seconds <= 0 {
		return 0
	}
	return float64(w.Requests) / float64(nodes) / (w.Seconds / 60)
}

// Milestone is how long after the start a share of the objects had got
// there (Ready nodes, Running pods).
type Milestone struct {
	Percent int     `json:"percent"`
	Count   int     `json:"count"`
	Seconds float64 `json:"seconds"`
}

// Result is one simulator at one size.
type Result struct {
	Simulator   string `json:"simulator"`
	Nodes       int    `json:"nodes"`
	PodsPerNode int    `json:"podsPerNode"`
	Status      Status `json:"status"`
	// Note says, for a run that is not ok, what happened in a few words.
	Note  string `json:"note,omitempty"`
	Error string `json:"error,omitempty"`

	// NodesReady nodes were Ready ReadySeconds after the simulator
	// started (for kwok: after kwok started and its Nodes were created).
	NodesReady    int         `json:"nodesReady"`
	ReadySeconds  float64     `json:"readySeconds,omitempty"`
	ReadyProgress []Milestone `json:"readyProgress,omitempty"`
	// PodsRunning pods were Running RunningSeconds after the first was
	// created; creating them all took CreateSeconds.
	PodsRunning     int         `json:"podsRunning"`
	CreateSeconds   float64     `json:"createSeconds,omitempty"`
	RunningSeconds  float64     `json:"runningSeconds,omitempty"`
	RunningProgress []Milestone `json:"runningProgress,omitempty"`
	// StartRequests and PodRequests are the simulator's API requests from
	// its start to all nodes Ready, and from the first pod's creation to
	// all pods Running.
	StartRequests int `json:"startRequests,omitempty"`
	PodRequests   int `json:"podRequests,omitempty"`

	Idle *Window `json:"idle,omitempty"`
	Busy *Window `json:"busy,omitempty"`

	// NodeBytes is the memory per node (PSS) the fit check used, or
	// measured when the run was stopped at the memory floor.
	NodeBytes uint64 `json:"nodeBytes,omitempty"`
	// LoadAvg is /proc/loadavg at the run's start.
	LoadAvg string `json:"loadAvg,omitempty"`
}

// milestones returns, for 50, 90, 99 and 100 % of total, how long after
// start the object that completed that share got there (sorted times of
// each object's arrival, the first arrivals first); shares not reached
// are left out. It is pure.
func milestones(arrivals []time.Duration, total int) []Milestone {
	var out []Milestone
	for _, pct := range []int{50, 90, 99, 100} {
		count := (total*pct + 99) / 100
		if count < 1 || count > len(arrivals) {
			continue
		}
		out = append(out, Milestone{Percent: pct, Count: count, Seconds: arrivals[count-1].Seconds()})
	}
	return out
}
