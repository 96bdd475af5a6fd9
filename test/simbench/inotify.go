package simbench

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Upstream's hollow-node template runs an init container before the
// hollow kubelet, `sysctl -w fs.inotify.max_user_instances=1000`: every
// hollow kubelet opens inotify instances of its own (two here: the static
// pod directory and the plugin registry), all as one user, and the
// kernel's default of 128 is spent by some 60 of them. The harness does
// the same for kubemark's runs, and puts the old value back after.
const (
	inotifyInstancesPath   = "/proc/sys/fs/inotify/max_user_instances"
	hollowInotifyInstances = 1000
)

// raiseInotifyInstances raises max_user_instances to at least want and
// returns what puts the old value back (nothing to do when it was high
// enough).
func raiseInotifyInstances(want int) (restore func() error, raised bool, err error) {
	b, err := os.ReadFile(inotifyInstancesPath)
	if err != nil {
		return nil, false, err
	}
	old, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return nil, false, fmt.Errorf("parse %s: %w", inotifyInstancesPath, err)
	}
	if old >= want {
		return func() error { return nil }, false, nil
	}
	if err := os.WriteFile(inotifyInstancesPath, []byte(strconv.Itoa(want)), 0o644); err != nil {
		return nil, false, fmt.Errorf("raise %s to %d, as upstream's hollow-node template does: %w", inotifyInstancesPath, want, err)
	}
	return func() error {
		return os.WriteFile(inotifyInstancesPath, []byte(strconv.Itoa(old)), 0o644)
	}, true, nil
}
