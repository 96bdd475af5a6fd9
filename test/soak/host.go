package soak

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Leftovers is what a kubelet left on the host after its pods were
// deleted: each is a count of things that should be gone.
type Leftovers struct {
	Sandboxes, Containers int // in the runtime
	PodDirs               int // <root>/pods/<uid>
	Mounts                int // mounts below <root>/pods
	PodCgroups            int // pod<uid> cgroups below kubepods
	CNILeases             int // host-local IP reservations of the berth network
}

// Total is the number of things left.
func (l Leftovers) Total() int {
	return l.Sandboxes + l.Containers + l.PodDirs + l.Mounts + l.PodCgroups + l.CNILeases
}

func (l Leftovers) String() string {
	return fmt.Sprintf("sandboxes %d, containers %d, pod dirs %d, mounts %d, pod cgroups %d, CNI leases %d",
		l.Sandboxes, l.Containers, l.PodDirs, l.Mounts, l.PodCgroups, l.CNILeases)
}

// host is where a scenario looks for leftovers.
type host struct {
	runtime runtimeapi.RuntimeServiceClient
	// cgroupRoot is /sys/fs/cgroup; cniDir the host-local plugin's
	// reservations of the berth network.
	cgroupRoot, cniDir string
}

// leftovers counts what is left of the kubelet whose root dir is root.
func (h host) leftovers(ctx context.Context, root string) (Leftovers, error) {
	var l Leftovers
	sbs, err := h.runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return l, fmt.Errorf("list pod sandboxes: %w", err)
	}
	cs, err := h.runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{})
	if err != nil {
		return l, fmt.Errorf("list containers: %w", err)
	}
	l.Sandboxes, l.Containers = len(sbs.GetItems()), len(cs.GetContainers())
	if entries, err := os.ReadDir(filepath.Join(root, "pods")); err == nil {
		l.PodDirs = len(entries)
	} else if !os.IsNotExist(err) {
		return l, err
	}
	mountinfo, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return l, err
	}
	l.Mounts = countMountsBelow(string(mountinfo), filepath.Join(root, "pods"))
	if l.PodCgroups, err = countPodCgroups(h.cgroupRoot); err != nil {
		return l, err
	}
	if l.CNILeases, err = countLeases(h.cniDir); err != nil {
		return l, err
	}
	return l, nil
}

// countMountsBelow counts the mounts of a mountinfo table below dir.
func countMountsBelow(mountinfo, dir string) int {
	n := 0
	for line := range strings.SplitSeq(mountinfo, "\n") {
		if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], dir+"/") {
			n++
		}
	}
	return n
}

// isPodCgroup says whether a cgroup directory's name is a pod's: pod<uid>
// (cgroupfs) or kubepods-...-pod<uid>.slice (systemd).
func isPodCgroup(name string) bool {
	return (strings.HasPrefix(name, "pod") && len(name) > len("pod")+30) ||
		(strings.HasPrefix(name, "kubepods-") && strings.Contains(name, "-pod") && strings.HasSuffix(name, ".slice"))
}

// countPodCgroups counts the distinct pod cgroups below kubepods in every
// hierarchy (v1: one per controller; v2: one).
func countPodCgroups(cgroupRoot string) (int, error) {
	pods := map[string]bool{}
	for _, top := range []string{"kubepods", "kubepods.slice"} {
		matches, _ := filepath.Glob(filepath.Join(cgroupRoot, "*", top))
		if v2 := filepath.Join(cgroupRoot, top); dirExists(v2) {
			matches = append(matches, v2)
		}
		for _, base := range matches {
			err := filepath.WalkDir(base, func(path string, d os.DirEntry, err error) error {
				if err != nil {
					return nil // a cgroup removed during the walk
				}
				if d.IsDir() && isPodCgroup(d.Name()) {
					pods[d.Name()] = true
					return filepath.SkipDir
				}
				return nil
			})
			if err != nil {
				return 0, err
			}
		}
	}
	return len(pods), nil
}

func dirExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// countLeases counts host-local's IP reservations in dir: the files named
// by an address (not last_reserved_ip.N, not lock).
func countLeases(dir string) (int, error) {
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range entries {
		if strings.ContainsAny(e.Name(), ".:") && !strings.HasPrefix(e.Name(), "last_reserved_ip") {
			n++
		}
	}
	return n, nil
}

// goroutines reads a kubelet's goroutine count from its profiling
// endpoint (both kubelets serve /debug/pprof on their port; the soak's
// configuration lets anyone read it).
func goroutines(ctx context.Context, nodeIP string) (int, error) {
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // the kubelet's self-signed serving certificate, on loopback
	}}
	defer client.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+nodeIP+":10250/debug/pprof/goroutine?debug=1", nil)
	if err != nil {
		return 0, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("read goroutines: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("read goroutines: %s", resp.Status)
	}
	return parseGoroutineTotal(io.LimitReader(resp.Body, 1<<20))
}

// parseGoroutineTotal reads "goroutine profile: total N" from the first
// line of a debug=1 goroutine profile.
func parseGoroutineTotal(r io.Reader) (int, error) {
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil && line == "" {
		return 0, fmt.Errorf("read goroutine profile: %w", err)
	}
	rest, ok := strings.CutPrefix(strings.TrimSpace(line), "goroutine profile: total ")
	if !ok {
		return 0, fmt.Errorf("not a goroutine profile: %q", line)
	}
	return strconv.Atoi(rest)
}
