package machine

import (
	"errors"
	"io/fs"
	"os"
	"runtime"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

// mapHost serves files from an in-memory filesystem rooted at "/".
func mapHost(files fstest.MapFS, fsErr error) Host {
	strip := func(name string) string { return name[1:] }
	return Host{
		ReadFile:      func(name string) ([]byte, error) { return fs.ReadFile(files, strip(name)) },
		ReadDir:       func(name string) ([]fs.DirEntry, error) { return fs.ReadDir(files, strip(name)) },
		KernelRelease: func() (string, error) { return "6.1.0-test", nil },
		FSCapacity: func(string) (int64, error) {
			if fsErr != nil {
				return 0, fsErr
			}
			return 100 << 30, nil
		},
		NumCPU:   func() int { return 7 },
		CgroupV2: func() bool { return true },
		SELinux:  func() bool { return true },
	}
}

func file(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }

func TestRead(t *testing.T) {
	full := fstest.MapFS{
		"proc/cpuinfo": file("processor : 0\nprocessor : 1\n"),
		"proc/meminfo": file("MemTotal: 2048 kB\nSwapTotal: 1024 kB\n"),
		"sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages":            file("3\n"),
		"sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages":         file("0\n"),
		"var/lib/dbus/machine-id":                                          file("dbus-id\n"),
		"sys/class/dmi/id/product_uuid":                                    file("UUID-1\n"),
		"proc/sys/kernel/random/boot_id":                                   file("boot-1\n"),
		"proc/sys/kernel/pid_max":                                          file("4194304\n"),
		"proc/sys/kernel/threads-max":                                      file("95000\n"),
		"usr/lib/os-release":                                               file("PRETTY_NAME=\"Test OS\"\n"),
		"sys/devices/system/cpu/possible":                                  file("0,2-3\n"),
		"sys/devices/system/cpu/cpu0/thermal_throttle/core_throttle_count": file("0\n"),
		"sys/devices/system/cpu/cpu1/thermal_throttle/core_throttle_count": file("0\n"), // not possible
		"sys/devices/system/cpu/cpu3/thermal_throttle/core_throttle_count": file("0\n"),
	}
	got, err := Read("/var/lib/berth", mapHost(full, nil))
	if err != nil {
		t.Fatal(err)
	}
	want := Info{
		NumCPU:          2,
		MemoryBytes:     2048 << 10,
		SwapBytes:       1024 << 10,
		HugePages:       map[string]int64{"2Mi": 3 * 2 << 20, "1Gi": 0},
		MaxPID:          95000,
		CgroupV2:        true,
		SELinux:         true,
		MachineID:       "dbus-id",
		SystemUUID:      "UUID-1",
		BootID:          "boot-1",
		KernelVersion:   "6.1.0-test",
		OSImage:         "Test OS",
		OperatingSystem: runtime.GOOS,
		Architecture:    runtime.GOARCH,
		RootFSBytes:     100 << 30,
		ThermalThrottleDirs: []string{
			"/sys/devices/system/cpu/cpu0/thermal_throttle", "/sys/devices/system/cpu/cpu3/thermal_throttle",
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Read() mismatch (-want +got):\n%s", diff)
	}
}

func TestReadSparseHost(t *testing.T) {
	// A VM without DMI, huge pages, machine-id or os-release, and a
	// cpuinfo without processor lines.
	// No list of possible CPUs: all NumCPU (7) are looked at.
	sparse := fstest.MapFS{
		"proc/cpuinfo": file("model name : x\n"),
		"proc/meminfo": file("MemTotal: 4 kB\n"),
		"sys/devices/system/cpu/cpu6/thermal_throttle/core_throttle_count": file("0\n"),
	}
	// A cgroup v1 host that cannot tell whether SELinux is on: off.
	h := mapHost(sparse, nil)
	h.CgroupV2 = func() bool { return false }
	h.SELinux = nil
	got, err := Read("/", h)
	if err != nil {
		t.Fatal(err)
	}
	want := Info{
		NumCPU: 7, MemoryBytes: 4096, KernelVersion: "6.1.0-test", OSImage: "Linux",
		OperatingSystem: runtime.GOOS, Architecture: runtime.GOARCH, RootFSBytes: 100 << 30,
		ThermalThrottleDirs: []string{"/sys/devices/system/cpu/cpu6/thermal_throttle"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Read() mismatch (-want +got):\n%s", diff)
	}
}

func TestReadErrors(t *testing.T) {
	_, err := Read("/x", mapHost(fstest.MapFS{}, errors.New("boom")))
	if err == nil {
		t.Fatal("Read() with no meminfo and a failing statfs: want error")
	}
	for _, want := range []string{"read memory", `stat filesystem of "/x": boom`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

// TestReadThisHost reads the real machine: a smoke test of OSHost.
func TestReadThisHost(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("linux only")
	}
	dir, _ := os.Getwd()
	got, err := Read(dir, OSHost())
	if err != nil {
		t.Fatal(err)
	}
	if got.NumCPU < 1 || got.MemoryBytes <= 0 || got.RootFSBytes <= 0 || got.KernelVersion == "" || got.BootID == "" {
		t.Errorf("Read(this host) = %+v: want CPUs, memory, root fs, kernel and boot ID", got)
	}
}
