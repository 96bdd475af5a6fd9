package podutil

import (
	"path/filepath"
	"strconv"

	"k8s.io/apimachinery/pkg/types"
)

// LogDir is a pod's log directory under podLogsDir (podLogsDir, the one
// configured value): <podLogsDir>/<namespace>_<name>_<uid>, as upstream's
// BuildPodLogsDirectory. The runtime is told it, and container logs,
// stats and housekeeping find the logs there.
func LogDir(podLogsDir, namespace, name string, uid types.UID) string {
	return filepath.Join(podLogsDir, namespace+"_"+name+"_"+string(uid))
}

// ContainerLogFile is a container instance's log file relative to its
// pod's LogDir: <container>/<restart count>.log, as upstream's
// BuildContainerLogsPath.
func ContainerLogFile(container string, restartCount int) string {
	return filepath.Join(container, strconv.Itoa(restartCount)+".log")
}
