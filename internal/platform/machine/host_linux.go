package machine

import (
	"os"
	"runtime"
	"syscall"

	"github.com/opencontainers/cgroups"

	"github.com/berthk8s/berth/internal/platform/selinux"
)

// OSHost returns a Host backed by the running Linux system.
func OSHost() Host {
	return Host{
		ReadFile:      os.ReadFile,
		ReadDir:       os.ReadDir,
		KernelRelease: kernelRelease,
		FSCapacity:    fsCapacity,
		NumCPU:        runtime.NumCPU,
		CgroupV2:      cgroups.IsCgroup2UnifiedMode,
		SELinux:       selinux.Host{}.Enabled,
	}
}

func kernelRelease() (string, error) {
	var u syscall.Utsname
	if err := syscall.Uname(&u); err != nil {
		return "", err
	}
	b := make([]byte, 0, len(u.Release))
	for _, c := range u.Release {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	return string(b), nil
}

// fsCapacity is the filesystem's size as cadvisor computes it: fragment
// size times blocks.
func fsCapacity(path string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return 0, err
	}
	return int64(st.Blocks) * st.Frsize, nil
}
