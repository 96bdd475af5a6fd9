package machine

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/berthk8s/berth/internal/podkit/cgroupmath"
)

// ParseCPUInfo counts the logical CPUs listed in /proc/cpuinfo: its
// "processor : N" lines. It returns 0 when there are none.
func ParseCPUInfo(data string) int {
	n := 0
	for _, line := range strings.Split(data, "\n") {
		key, _, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(key) == "processor" {
			n++
		}
	}
	return n
}

// ParseMemInfo returns MemTotal and SwapTotal of /proc/meminfo in bytes.
// MemTotal is required; SwapTotal is 0 when absent.
func ParseMemInfo(data string) (memTotal, swapTotal int64, err error) {
	var haveMem bool
	for _, line := range strings.Split(data, "\n") {
		key, rest, ok := strings.Cut(line, ":")
		if !ok || (key != "MemTotal" && key != "SwapTotal") {
			continue
		}
		v, err := parseKB(rest)
		if err != nil {
			return 0, 0, fmt.Errorf("parse meminfo %s: %w", key, err)
		}
		if key == "MemTotal" {
			memTotal, haveMem = v, true
		} else {
			swapTotal = v
		}
	}
	if !haveMem {
		return 0, 0, fmt.Errorf("parse meminfo: no MemTotal")
	}
	return memTotal, swapTotal, nil
}

// parseKB parses " 16384 kB" into bytes.
func parseKB(s string) (int64, error) {
	fields := strings.Fields(s)
	if len(fields) == 0 || len(fields) > 2 || (len(fields) == 2 && fields[1] != "kB") {
		return 0, fmt.Errorf("unexpected value %q", strings.TrimSpace(s))
	}
	v, err := strconv.ParseInt(fields[0], 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("unexpected value %q", strings.TrimSpace(s))
	}
	if len(fields) == 2 {
		v *= 1024
	}
	return v, nil
}

// ParseHugePageDir reads the page size from a directory name under
// /sys/kernel/mm/hugepages ("hugepages-2048kB") in bytes.
func ParseHugePageDir(name string) (pageBytes int64, ok bool) {
	kb, found := strings.CutPrefix(name, "hugepages-")
	if !found {
		return 0, false
	}
	kb, found = strings.CutSuffix(kb, "kB")
	if !found {
		return 0, false
	}
	v, err := strconv.ParseInt(kb, 10, 64)
	if err != nil || v <= 0 {
		return 0, false
	}
	return v * 1024, true
}

// HugePageSize writes a page size in bytes as the quantity used in the
// resource name: 2097152 -> "2Mi", 1073741824 -> "1Gi".
func HugePageSize(pageBytes int64) string {
	return resource.NewQuantity(pageBytes, resource.BinarySI).String()
}

// ParseOSRelease returns PRETTY_NAME of an os-release file without its
// quotes, or "Linux" when the file has none (as cadvisor).
func ParseOSRelease(data string) string {
	for _, line := range strings.Split(data, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "PRETTY_NAME="); ok {
			return strings.Trim(v, `"`)
		}
	}
	return "Linux"
}

// ParseID trims an ID file (machine-id, boot_id, product_uuid).
func ParseID(data string) string {
	return strings.TrimSpace(data)
}

// parseCount parses a non-negative decimal count.
func parseCount(s string) (int64, error) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, err
	}
	if v < 0 {
		return 0, fmt.Errorf("negative count %d", v)
	}
	return v, nil
}

// ParseSwapsOn reports whether /proc/swaps lists any swap: more than its
// header line (upstream's isSwapOnAccordingToProcSwaps).
func ParseSwapsOn(data []byte) bool {
	return len(strings.Split(strings.TrimSpace(string(data)), "\n")) > 1
}

// CheckCgroupV1 is the failCgroupV1 decision, as upstream's validation
// makes it at start: with failCgroupV1, a host that is not on the unified
// cgroup v2 hierarchy (v1 or hybrid) is refused.
func CheckCgroupV1(failCgroupV1 bool, info Info) error {
	if failCgroupV1 && !info.CgroupV2 {
		return errors.New("kubelet is configured to not run on a host using cgroup v1. cgroup v1 support is unsupported and will be removed in a future release")
	}
	return nil
}

// CheckLimitedSwap is upstream's start check on memorySwap: LimitedSwap
// is refused on a cgroup v1 host, where swap cannot be limited per
// container.
func CheckLimitedSwap(swapBehavior string, info Info) error {
	if !info.CgroupV2 && swapBehavior == cgroupmath.LimitedSwap {
		return errors.New("swap feature is enabled and LimitedSwap but it is only supported with cgroupv2")
	}
	return nil
}

// CheckSwap is the failSwapOn decision, as upstream's container manager
// makes it at start: with failSwapOn, a node with swap on is refused.
func CheckSwap(failSwapOn bool, info Info) error {
	if failSwapOn && info.SwapOn {
		return errors.New("running with swap on is not supported, please disable swap or set --fail-swap-on flag to false")
	}
	return nil
}

// ParseUnifiedCgroup returns the cgroup v2 path of a /proc/<pid>/cgroup
// file: the path of its "0::" line.
func ParseUnifiedCgroup(data string) (string, bool) {
	for _, line := range strings.Split(data, "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			return p, true
		}
	}
	return "", false
}
