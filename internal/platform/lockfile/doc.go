// Package lockfile owns berth's --lock-file: an exclusive flock(2) on the
// file held for the life of the process (Acquire), and, for
// --exit-on-lock-contention, a watch that reports when another process
// opens or deletes the file (WatchContention), as upstream's kubelet does
// with its flock and watchForLockfileContention.
//
// The lock lets an upgrade start the new berth before the old one stops:
// the new one opens the file and waits for the lock; the old one, watching
// with --exit-on-lock-contention, sees the open and stops (its pods keep
// running), which frees the lock.
package lockfile
