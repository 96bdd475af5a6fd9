package volume

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Mounter mounts and unmounts the tmpfs that backs secret and projected
// volumes and emptyDir volumes of medium Memory, the hugetlbfs of emptyDir
// volumes of medium HugePages, nfs volumes, and the bind mounts of local
// persistent volumes.
type Mounter interface {
	// MountTmpfs mounts a tmpfs on target; sizeBytes 0 means the kernel's
	// default size.
	MountTmpfs(target string, sizeBytes int64) error
	// MountHugetlbfs mounts a hugetlbfs of pages of pageSize (a
	// quantity: "2Mi") on target.
	MountHugetlbfs(target, pageSize string) error
	// MountNFS mounts the nfs export source ("server:/path") on target
	// with options, through mount(8) and its nfs helper.
	MountNFS(source, target string, options []string) error
	// BindMount binds the directory source on target, read-only when
	// readOnly.
	BindMount(source, target string, readOnly bool) error
	// FormatAndMount mounts the block device on target as a filesystem of
	// fsType with options, formatting it first when it holds no
	// filesystem (k8s.io/mount-utils' SafeFormatAndMount: blkid, then
	// mkfs.<fsType>; a device with another filesystem is refused).
	FormatAndMount(device, target, fsType string, options []string) error
	// Unmount unmounts target.
	Unmount(target string) error
	// IsMountPoint reports whether path is a mount point.
	IsMountPoint(path string) (bool, error)
	// MountSource is the source of the mount at path (a device for a
	// disk's filesystem and each bind of it), "" when path is no mount
	// point.
	MountSource(path string) (string, error)
}

// tmpfsOptions is the data argument of the tmpfs mount.
func tmpfsOptions(sizeBytes int64) string {
	if sizeBytes > 0 {
		return "size=" + strconv.FormatInt(sizeBytes, 10)
	}
	return ""
}

// isMountPointIn reports whether path is a mount point in a
// /proc/self/mountinfo listing (field 5 is the mount point, with spaces and
// other special characters octal-escaped).
func isMountPointIn(mountinfo, path string) bool {
	path = filepath.Clean(path)
	sc := bufio.NewScanner(strings.NewReader(mountinfo))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 5 && unescapeOctal(fields[4]) == path {
			return true
		}
	}
	return false
}

// mountSourceIn is the source of the mount on top at path in a
// /proc/self/mountinfo listing (the field after the filesystem type,
// which follows the " - " separator), "" for none.
func mountSourceIn(mountinfo, path string) string {
	path = filepath.Clean(path)
	source := ""
	sc := bufio.NewScanner(strings.NewReader(mountinfo))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 || unescapeOctal(fields[4]) != path {
			continue
		}
		for i, f := range fields {
			if f == "-" && i+2 < len(fields) {
				source = unescapeOctal(fields[i+2])
				break
			}
		}
	}
	return source
}

func unescapeOctal(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// readMountInfo reads the mount table of berth's mount namespace.
func readMountInfo() (string, error) {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", fmt.Errorf("read mountinfo: %w", err)
	}
	return string(data), nil
}
