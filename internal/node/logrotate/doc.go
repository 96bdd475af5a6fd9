// Package logrotate rotates container logs as upstream's container log
// manager does (pkg/kubelet/logs): every containerLogMonitorInterval it
// lists the running containers, and containerLogMaxWorkers workers check
// each one's log; a log of containerLogMaxSize or more is renamed
// <log>.<timestamp> and the runtime is asked to reopen it
// (ReopenContainerLog). Older rotated files are gzipped to
// <log>.<timestamp>.gz (through .tmp), the newest rotated file stays
// uncompressed, and the oldest beyond containerLogMaxFiles go.
// internal/platform/containerlogs reads the rotated files and follows the log
// across a rotation, so kubectl logs keeps working.
//
// The runtime writes these files, not the pod; still, every file
// operation goes through an os.Root opened on the container's log
// directory under podLogsDir, reached without following a symlink, and
// files are opened with O_NOFOLLOW.
//
//	choose.go    Choose: the pure decision for one log (remove, compress,
//	             rotate to which name)
//	logdir.go    the container's log directory, opened under podLogsDir
//	compress.go  gzip through a temporary file
//	manager.go   Manager: the loop, the workers, applying a plan; Clean
//	             removes a container's log files for the container GC
package logrotate
