// Package gc removes what the node no longer needs, as upstream's image
// and container garbage collectors do.
//
// Image GC (images.go decides, image_records.go and image_gc.go apply),
// every 5 minutes (ImageGCPeriod): berth records when it first saw each
// image and when it last saw a container (in any state, berth's or not) use it; images in
// use, pinned by the runtime (CRI Image.pinned) or the sandbox image are
// never removed. Images unused for longer than imageMaximumGCAge go (once
// berth has run that long); then, if the image filesystem (usage from the
// CRI's ImageFsInfo, capacity from statfs of its mount point) is at or
// above imageGCHighThresholdPercent, the least recently used images
// detected more than imageMinimumGCAge ago go until usage would be down to
// imageGCLowThresholdPercent. Removed images count in
// kubelet_image_garbage_collected_total{reason="age"|"space"}; repeated
// failures are ImageGCFailed events, not enough to free a
// FreeDiskSpaceFailed event, a zero capacity an InvalidDiskCapacity event.
//
// Container GC (containers.go decides, container_gc.go applies), every
// minute (ContainerGCPeriod), with the policy of the deprecated flags
// --minimum-container-ttl-duration, --maximum-dead-containers-per-container
// and --maximum-dead-containers: dead containers beyond the per-container
// and node-wide limits and older than the minimum age go oldest first (all
// of a pod whose content may be removed), their log files with them
// (logrotate.Manager.Clean); then sandboxes neither ready nor holding a
// container, except the newest of a pod that may still run. Failures are
// ContainerGCFailed events. This is the one place that removes the dead
// containers of live pods: the pod path (kuberuntime) does not prune
// them. A pod's own removal when it is finished stays podsync's
// (kuberuntime.RemovePod), and the log directories of pods gone for good
// are housekeeping's, which decides "gone" once for pod and log
// directories alike. berth makes no /var/log/containers symlinks, so
// there are none to clean up.
//
// Node-level reclaim for the eviction manager (eviction.NodeReclaimer),
// as upstream: DeleteAllUnusedContainers is a container collection with
// the same policy in which pods whose runtime may be removed (terminated,
// deleted or not) count as content-removable; DeleteUnusedImages removes
// every unused, unpinned image (not the sandbox image) detected at least
// imageMinimumGCAge ago, whatever the disk usage (ChooseAllUnused),
// counted with reason "space". Each GC serializes its collections with a
// mutex, since the eviction manager calls from its own goroutine.
//
// The choosers (EvictionOrder, ChooseByAge, ChooseBySpace,
// ChooseAllUnused, ChooseContainers, ChooseSandboxes) are pure: a snapshot
// and the time in, a choice out.
package gc
