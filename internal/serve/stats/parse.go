package stats

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
)

// parseKeyValues parses "key value" lines (memory.stat, cpu.stat).
// Lines that do not hold an unsigned integer value are skipped. It is pure.
func parseKeyValues(data string) map[string]uint64 {
	out := map[string]uint64{}
	sc := bufio.NewScanner(strings.NewReader(data))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 2 {
			continue
		}
		if v, err := strconv.ParseUint(fields[1], 10, 64); err == nil {
			out[fields[0]] = v
		}
	}
	return out
}

// parseUint parses a file holding one unsigned integer.
func parseUint(data string) (uint64, error) {
	v, err := strconv.ParseUint(strings.TrimSpace(data), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("parse integer %q: %w", strings.TrimSpace(data), err)
	}
	return v, nil
}

// parseMeminfo parses /proc/meminfo into bytes by field name.
func parseMeminfo(data string) map[string]uint64 {
	out := map[string]uint64{}
	sc := bufio.NewScanner(strings.NewReader(data))
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			continue
		}
		v, err := strconv.ParseUint(fields[0], 10, 64)
		if err != nil {
			continue
		}
		if len(fields) > 1 && fields[1] == "kB" {
			v *= 1024
		}
		out[name] = v
	}
	return out
}

// parseBootTime returns the btime field of /proc/stat (seconds since the
// epoch).
func parseBootTime(data string) (int64, error) {
	sc := bufio.NewScanner(strings.NewReader(data))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "btime "); ok {
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, fmt.Errorf("no btime in /proc/stat")
}

// memory is the node's memory figures in bytes.
type memory struct {
	Usage, WorkingSet, RSS, Available uint64
	PageFaults, MajorPageFaults       uint64
	// SwapUsage and SwapAvailable are the machine's swap (meminfo).
	SwapUsage, SwapAvailable uint64
}

// withSwap adds the machine's swap from /proc/meminfo.
func (m memory) withSwap(meminfo map[string]uint64) memory {
	m.SwapAvailable = meminfo["SwapFree"]
	if meminfo["SwapTotal"] > meminfo["SwapFree"] {
		m.SwapUsage = meminfo["SwapTotal"] - meminfo["SwapFree"]
	}
	return m
}

// memoryV1 computes the node's memory from the root memory cgroup of a v1
// hierarchy (memory.usage_in_bytes and memory.stat), as cAdvisor does:
// the working set is the usage less inactive file pages. capacity is the
// machine's memory; available is capacity less the working set.
func memoryV1(usage uint64, stat map[string]uint64, capacity uint64) memory {
	return memory{
		Usage:           usage,
		WorkingSet:      workingSet(usage, stat["total_inactive_file"]),
		RSS:             stat["total_rss"],
		PageFaults:      stat["total_pgfault"],
		MajorPageFaults: stat["total_pgmajfault"],
		Available:       available(capacity, workingSet(usage, stat["total_inactive_file"])),
	}
}

// memoryV2 computes the node's memory on a v2 (unified) hierarchy. The
// root cgroup has no memory.current: the usage is MemTotal less MemFree
// (as runc does for the root); the rest comes from the root memory.stat.
func memoryV2(meminfo, stat map[string]uint64) memory {
	var usage uint64
	if meminfo["MemTotal"] > meminfo["MemFree"] {
		usage = meminfo["MemTotal"] - meminfo["MemFree"]
	}
	ws := workingSet(usage, stat["inactive_file"])
	return memory{
		Usage:           usage,
		WorkingSet:      ws,
		RSS:             stat["anon"],
		PageFaults:      stat["pgfault"],
		MajorPageFaults: stat["pgmajfault"],
		Available:       available(meminfo["MemTotal"], ws),
	}
}

// maxMemoryLimit is upstream's bound above which a memory limit counts as
// unlimited (isMemoryUnlimited: the kernel rounds the v1 "no limit" down
// from MaxInt64).
const maxMemoryLimit = uint64(1 << 62)

// parseMemoryLimit parses memory.limit_in_bytes (v1) or memory.max (v2)
// and reports whether it is a limit: "max" and values above
// maxMemoryLimit are none. It is pure.
func parseMemoryLimit(data string) (uint64, bool) {
	v, err := strconv.ParseUint(strings.TrimSpace(data), 10, 64)
	if err != nil || v > maxMemoryLimit {
		return 0, false
	}
	return v, true
}

func workingSet(usage, inactiveFile uint64) uint64 {
	if inactiveFile >= usage {
		return 0
	}
	return usage - inactiveFile
}

func available(capacity, ws uint64) uint64 {
	if ws >= capacity {
		return 0
	}
	return capacity - ws
}

// cpuV2 returns the cumulative CPU time in nanoseconds from a v2 cpu.stat.
func cpuV2(stat map[string]uint64) (uint64, bool) {
	v, ok := stat["usage_usec"]
	return v * 1000, ok
}
