package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat:
// 100 on every Linux architecture Kubernetes runs on.
const clockTicks = 100

// procSample is one reading of a process.
type procSample struct {
	At       time.Time
	CPUTicks uint64 // utime + stime
	RSSBytes uint64
}

// procStat is what the harness reads of a process from /proc/<pid>/stat.
type procStat struct {
	PID, PPID int
	Comm      string
	// Ticks is utime + stime + cutime + cstime: the process's CPU time and
	// that of the children it has waited for, so the CPU of a short-lived
	// child (a mount, a CNI plugin) is counted once it is reaped.
	Ticks uint64
}

// parseStat parses the content of /proc/<pid>/stat. The command name
// (field 2) may hold spaces and parentheses, so fields are counted after
// its last ')'.
func parseStat(stat []byte) (procStat, error) {
	open, i := bytes.IndexByte(stat, '('), bytes.LastIndexByte(stat, ')')
	if open < 0 || i < open {
		return procStat{}, fmt.Errorf("parse /proc stat: no command name")
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(stat[:open])))
	if err != nil {
		return procStat{}, fmt.Errorf("parse /proc stat pid: %w", err)
	}
	// After ')': state (field 3), ppid (4) ... utime 14, stime 15, cutime
	// 16, cstime 17.
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 15 {
		return procStat{}, fmt.Errorf("parse /proc stat: %d fields after the command name", len(fields))
	}
	ppid, err := strconv.Atoi(fields[1])
	if err != nil {
		return procStat{}, fmt.Errorf("parse /proc stat ppid: %w", err)
	}
	st := procStat{PID: pid, PPID: ppid, Comm: string(stat[open+1 : i])}
	for _, f := range fields[11:15] {
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return procStat{}, fmt.Errorf("parse /proc stat times: %w", err)
		}
		st.Ticks += uint64(max(v, 0))
	}
	return st, nil
}

// parseStatusRSS returns VmRSS in bytes from the content of
// /proc/<pid>/status.
func parseStatusRSS(status []byte) (uint64, error) {
	for line := range strings.SplitSeq(string(status), "\n") {
		rest, ok := strings.CutPrefix(line, "VmRSS:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("parse VmRSS %q", line)
		}
		kb, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parse VmRSS %q: %w", line, err)
		}
		return kb * 1024, nil
	}
	return 0, fmt.Errorf("parse /proc status: no VmRSS")
}

// readTable reads every process's stat. A process that exits while the
// table is read is left out.
func readTable() (map[int]procStat, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	out := make(map[int]procStat, len(entries))
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		if st, err := parseStat(b); err == nil {
			out[st.PID] = st
		}
	}
	return out, nil
}

// tree returns roots and all their live descendants in table. It is pure.
func tree(table map[int]procStat, roots ...int) map[int]bool {
	children := map[int][]int{}
	for pid, st := range table {
		children[st.PPID] = append(children[st.PPID], pid)
	}
	in := map[int]bool{}
	queue := slices.Clone(roots)
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if _, ok := table[pid]; !ok || in[pid] {
			continue
		}
		in[pid] = true
		queue = append(queue, children[pid]...)
	}
	return in
}

// ticks sums the CPU ticks of the processes in set. It is pure.
func ticks(table map[int]procStat, set map[int]bool) uint64 {
	var sum uint64
	for pid := range set {
		sum += table[pid].Ticks
	}
	return sum
}

// readTree samples process pid and its descendants now: their CPU time
// (with their reaped children's) and their RSS summed. The root must be
// readable; a descendant gone since the table was read is left out.
func readTree(table map[int]procStat, pid int, now time.Time) (procSample, error) {
	if _, ok := table[pid]; !ok {
		return procSample{}, fmt.Errorf("process %d is gone", pid)
	}
	set := tree(table, pid)
	s := procSample{At: now, CPUTicks: ticks(table, set)}
	for p := range set {
		status, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p), "status"))
		if err != nil {
			if p == pid {
				return procSample{}, err
			}
			continue
		}
		// Kernel threads have no VmRSS; they are never a kubelet's child.
		if rss, err := parseStatusRSS(status); err == nil {
			s.RSSBytes += rss
		}
	}
	return s, nil
}

// cpuWindow is the number of one-second samples each CPU figure spans:
// one clock tick is 1 % of a core over one second, 0.2 % over five.
const cpuWindow = 5

// usage turns one-second samples into RSS (MiB, one per sample) and CPU use
// (percent of one core, one per window of cpuWindow seconds).
func usage(samples []procSample) (cpuPercent, rssMiB []float64) {
	for i, s := range samples {
		rssMiB = append(rssMiB, float64(s.RSSBytes)/(1<<20))
		if i == 0 || i%cpuWindow != 0 {
			continue
		}
		prev := samples[i-cpuWindow]
		dt := s.At.Sub(prev.At).Seconds()
		if dt <= 0 || s.CPUTicks < prev.CPUTicks {
			continue
		}
		cpuPercent = append(cpuPercent, float64(s.CPUTicks-prev.CPUTicks)/clockTicks/dt*100)
	}
	return cpuPercent, rssMiB
}

// ProcSample is one reading of a process tree, as SampleProcs returns it.
type ProcSample = procSample

// SampleProcs is sampleProcs, for test/simbench: every pid's tree read
// once a second for d, by pid.
func SampleProcs(ctx context.Context, d time.Duration, pids ...int) (map[int][]ProcSample, error) {
	return sampleProcs(ctx, d, pids...)
}

// CPUSeconds is the CPU time the samples span, in seconds. It is pure.
func CPUSeconds(samples []ProcSample) float64 { return cpuSeconds(samples) }

// sampleProcs reads every pid (with its descendants) once a second for d
// and returns each one's samples, by pid. A process that cannot be read is
// an error.
func sampleProcs(ctx context.Context, d time.Duration, pids ...int) (map[int][]procSample, error) {
	return sampleLoop(ctx, time.Now().Add(d), pids...)
}

// sampleUntilDone is sampleProcs until ctx ends: it returns what it read.
func sampleUntilDone(ctx context.Context, pids ...int) (map[int][]procSample, error) {
	return sampleLoop(ctx, time.Time{}, pids...)
}

// sampleLoop samples once a second until end, or until ctx ends when end
// is zero.
func sampleLoop(ctx context.Context, end time.Time, pids ...int) (map[int][]procSample, error) {
	out := map[int][]procSample{}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	read := func() error {
		now := time.Now()
		table, err := readTable()
		if err != nil {
			return err
		}
		for _, pid := range pids {
			s, err := readTree(table, pid, now)
			if err != nil {
				return fmt.Errorf("sample process %d: %w", pid, err)
			}
			out[pid] = append(out[pid], s)
		}
		return nil
	}
	for {
		if err := read(); err != nil {
			return nil, err
		}
		if !end.IsZero() && !time.Now().Before(end) {
			return out, nil
		}
		select {
		case <-ctx.Done():
			if end.IsZero() {
				// The last reading closes the window at its end.
				return out, read()
			}
			return nil, ctx.Err()
		case <-tick.C:
		}
	}
}

// peakCPU is the busiest window of up to cpuWindow seconds in the
// samples, in percent of one core; false with fewer than two samples. It
// is pure.
func peakCPU(samples []procSample) (float64, bool) {
	w := min(cpuWindow, len(samples)-1)
	if w < 1 {
		return 0, false
	}
	peak, ok := 0.0, false
	for i := w; i < len(samples); i++ {
		a, b := samples[i-w], samples[i]
		dt := b.At.Sub(a.At).Seconds()
		if dt <= 0 || b.CPUTicks < a.CPUTicks {
			continue
		}
		peak, ok = max(peak, float64(b.CPUTicks-a.CPUTicks)/clockTicks/dt*100), true
	}
	return peak, ok
}

// cpuSeconds is the CPU time the samples span, in seconds. It is pure.
func cpuSeconds(samples []procSample) float64 {
	if len(samples) < 2 {
		return 0
	}
	first, last := samples[0], samples[len(samples)-1]
	if last.CPUTicks < first.CPUTicks {
		return 0
	}
	return float64(last.CPUTicks-first.CPUTicks) / clockTicks
}

// cpuSecondsPerMinute is the CPU time the samples span per minute of
// wall time. It is pure.
func cpuSecondsPerMinute(samples []procSample) float64 {
	if len(samples) < 2 {
		return 0
	}
	wall := samples[len(samples)-1].At.Sub(samples[0].At).Minutes()
	if wall <= 0 {
		return 0
	}
	return cpuSeconds(samples) / wall
}

// RuntimePID returns the pid of the process that listens on the unix
// socket of the CRI endpoint (unix:///path or /path): the runtime under
// measure, whatever its name and however many runtimes the machine runs
// (hack/node-setup.sh may run containerd 2 next to the host's).
func RuntimePID(endpoint string) (int, error) {
	path := strings.TrimPrefix(endpoint, "unix://")
	table, err := os.ReadFile("/proc/net/unix")
	if err != nil {
		return 0, fmt.Errorf("read /proc/net/unix: %w", err)
	}
	inode, err := listeningInode(string(table), path)
	if err != nil {
		return 0, err
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	want := "socket:[" + inode + "]"
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		fds, err := os.ReadDir(filepath.Join("/proc", e.Name(), "fd"))
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if link, err := os.Readlink(filepath.Join("/proc", e.Name(), "fd", fd.Name())); err == nil && link == want {
				return pid, nil
			}
		}
	}
	return 0, fmt.Errorf("find the process listening on %s: none holds socket inode %s", path, inode)
}

// soAcceptCon is the /proc/net/unix flag of a listening socket
// (__SO_ACCEPTCON).
const soAcceptCon = 0x10000

// listeningInode returns the inode of the listening socket bound to path
// in a /proc/net/unix table ("Num RefCount Protocol Flags Type St Inode
// Path"). It is pure.
func listeningInode(table, path string) (string, error) {
	for _, line := range strings.Split(table, "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 8 || f[7] != path {
			continue
		}
		flags, err := strconv.ParseUint(f[3], 16, 32)
		if err == nil && flags&soAcceptCon != 0 {
			return f[6], nil
		}
	}
	return "", fmt.Errorf("no process listens on %s", path)
}

// RSSBytes is the resident memory of process pid alone, from
// /proc/<pid>/status.
func RSSBytes(pid int) (uint64, error) {
	status, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0, err
	}
	return parseStatusRSS(status)
}
