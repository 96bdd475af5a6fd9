package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
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

// parseStatCPU returns utime+stime from the content of /proc/<pid>/stat.
// The command name (field 2) may hold spaces and parentheses, so fields
// are counted after its last ')'.
func parseStatCPU(stat []byte) (uint64, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("parse /proc stat: no command name")
	}
	// After ')': state (field 3) ... utime is field 14, stime field 15.
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 13 {
		return 0, fmt.Errorf("parse /proc stat: %d fields after the command name", len(fields))
	}
	utime, err := strconv.ParseUint(fields[11], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("parse /proc stat utime: %w", err)
	}
	stime, err := strconv.ParseUint(fields[12], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("parse /proc stat stime: %w", err)
	}
	return utime + stime, nil
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

// readProc samples process pid now.
func readProc(pid int, now time.Time) (procSample, error) {
	dir := filepath.Join("/proc", strconv.Itoa(pid))
	stat, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return procSample{}, err
	}
	status, err := os.ReadFile(filepath.Join(dir, "status"))
	if err != nil {
		return procSample{}, err
	}
	cpu, err := parseStatCPU(stat)
	if err != nil {
		return procSample{}, err
	}
	rss, err := parseStatusRSS(status)
	if err != nil {
		return procSample{}, err
	}
	return procSample{At: now, CPUTicks: cpu, RSSBytes: rss}, nil
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

// sampleProcs reads every pid once a second for d and returns each one's
// samples, by pid. A process that cannot be read is an error.
func sampleProcs(ctx context.Context, d time.Duration, pids ...int) (map[int][]procSample, error) {
	out := map[int][]procSample{}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	end := time.Now().Add(d)
	for {
		now := time.Now()
		for _, pid := range pids {
			s, err := readProc(pid, now)
			if err != nil {
				return nil, fmt.Errorf("sample process %d: %w", pid, err)
			}
			out[pid] = append(out[pid], s)
		}
		if !now.Before(end) {
			return out, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick.C:
		}
	}
}

// findProcess returns the pid of the only process whose command name is
// comm (containerd: not its shims).
func findProcess(comm string) (int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	var found []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
		if err == nil && strings.TrimSpace(string(b)) == comm {
			found = append(found, pid)
		}
	}
	if len(found) != 1 {
		return 0, fmt.Errorf("find process %q: %d found", comm, len(found))
	}
	return found[0], nil
}
