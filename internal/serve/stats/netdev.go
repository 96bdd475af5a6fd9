package stats

import (
	"bufio"
	"io"
	"strconv"
	"strings"

	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// defaultInterfaceName is the interface upstream's summary reports as the
// network's default (network.DefaultInterfaceName).
const defaultInterfaceName = "eth0"

// ignoredDevicePrefixes are the interfaces cAdvisor leaves out of a
// container's network (github.com/google/cadvisor/lib/container/libcontainer,
// pinned by a test): loopback and the host ends of container links.
var ignoredDevicePrefixes = []string{"lo", "veth", "docker", "nerdctl"}

// maxNetDevLines bounds a /proc/net/dev read.
const maxNetDevLines = 4096

// parseNetDev parses /proc/<pid>/net/dev into per-interface counters,
// leaving out the interfaces cAdvisor ignores, in file order. It is pure.
func parseNetDev(r io.Reader) []statsapi.InterfaceStats {
	var out []statsapi.InterfaceStats
	sc := bufio.NewScanner(io.LimitReader(r, 1<<20))
	for line := 0; sc.Scan() && line < maxNetDevLines; line++ {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || ignoredDevice(name) {
			continue
		}
		f := strings.Fields(rest)
		if len(f) < 16 {
			continue
		}
		num := func(i int) *uint64 {
			v, err := strconv.ParseUint(f[i], 10, 64)
			if err != nil {
				return nil
			}
			return &v
		}
		// Receive: bytes packets errs drop ...; transmit from field 8.
		out = append(out, statsapi.InterfaceStats{Name: name, RxBytes: num(0), RxErrors: num(2), TxBytes: num(8), TxErrors: num(10)})
	}
	return out
}

func ignoredDevice(name string) bool {
	for _, p := range ignoredDevicePrefixes {
		if strings.HasPrefix(strings.ToLower(name), p) {
			return true
		}
	}
	return false
}

// networkFromInterfaces is the summary's network: every interface, the
// default one (eth0) first as upstream's cAdvisor conversion picks it.
func networkFromInterfaces(ifaces []statsapi.InterfaceStats) *statsapi.NetworkStats {
	if len(ifaces) == 0 {
		return nil
	}
	out := &statsapi.NetworkStats{Interfaces: ifaces}
	for _, i := range ifaces {
		if i.Name == defaultInterfaceName {
			out.InterfaceStats = i
		}
	}
	return out
}

// countProcessors counts the logical CPUs in /proc/cpuinfo ("processor"
// lines), as cAdvisor's machine_cpu_cores. It is pure.
func countProcessors(r io.Reader) int {
	n := 0
	sc := bufio.NewScanner(io.LimitReader(r, 16<<20))
	for sc.Scan() {
		if k, _, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "processor" {
			n++
		}
	}
	return n
}
