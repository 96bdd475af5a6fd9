package memorymanager

import (
	"bufio"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// SysfsNodes is where Discover's file system is rooted on a Linux host.
const SysfsNodes = "/sys/devices/system/node"

var nodeDir = regexp.MustCompile(`^node([0-9]+)$`)

// Discover reads the NUMA nodes from sysfs, as cadvisor's machine info
// does: each node<N>'s MemTotal from its meminfo, and per huge page size
// nr_hugepages times the size.
func Discover(fsys fs.FS) ([]NUMANode, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("read NUMA nodes: %w", err)
	}
	var nodes []NUMANode
	for _, e := range entries {
		m := nodeDir.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		id, err := strconv.Atoi(m[1])
		if err != nil || id >= 64 {
			return nil, fmt.Errorf("read NUMA node %q: unsupported ID", e.Name())
		}
		n := NUMANode{ID: id, HugePages: map[corev1.ResourceName]uint64{}}
		if n.Memory, err = memTotal(fsys, path.Join(e.Name(), "meminfo")); err != nil {
			return nil, err
		}
		if err := hugePages(fsys, e.Name(), n.HugePages); err != nil {
			return nil, err
		}
		nodes = append(nodes, n)
	}
	if len(nodes) == 0 {
		return nil, fmt.Errorf("read NUMA nodes: none found")
	}
	return nodes, nil
}

// memTotal reads "Node N MemTotal: X kB" from a node's meminfo.
func memTotal(fsys fs.FS, name string) (uint64, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return 0, fmt.Errorf("open %q: %w", name, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 5 && fields[2] == "MemTotal:" && fields[4] == "kB" {
			kb, err := strconv.ParseUint(fields[3], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("parse MemTotal in %q: %w", name, err)
			}
			return kb * 1024, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("read %q: %w", name, err)
	}
	return 0, fmt.Errorf("read %q: no MemTotal", name)
}

// hugePages reads each hugepages-<size>kB/nr_hugepages of a node.
func hugePages(fsys fs.FS, node string, out map[corev1.ResourceName]uint64) error {
	dir := path.Join(node, "hugepages")
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil // a kernel without huge pages
	}
	for _, e := range entries {
		kbs, ok := strings.CutSuffix(strings.TrimPrefix(e.Name(), "hugepages-"), "kB")
		kb, err := strconv.ParseUint(kbs, 10, 64)
		if !ok || err != nil {
			continue
		}
		b, err := fs.ReadFile(fsys, path.Join(dir, e.Name(), "nr_hugepages"))
		if err != nil {
			return fmt.Errorf("read huge pages of %q: %w", path.Join(dir, e.Name()), err)
		}
		pages, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			return fmt.Errorf("parse huge pages of %q: %w", path.Join(dir, e.Name()), err)
		}
		size := resource.NewQuantity(int64(kb)*1024, resource.BinarySI)
		out[corev1.ResourceName(corev1.ResourceHugePagesPrefix+size.String())] = pages * kb * 1024
	}
	return nil
}
