// Package podsync is the pod workers' Syncer: for each phase of a pod it
// generates the pod's API status, prepares the pod's directories and asks
// the runtime manager to converge, kill or remove the pod.
//
// It keeps, per pod UID, the start failures of the last sync (the reason a
// container is waiting: ErrImagePull, CrashLoopBackOff, ...), which feed the
// next generated status.
package podsync
