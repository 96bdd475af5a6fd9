package cluster

// SharedHostEviction is the evictionHard block of every berth node the
// development cluster and the end-to-end tests run: upstream's memory
// threshold, and disk thresholds far below upstream's 10 % (nodefs) and
// 15 % (imagefs). The nodes share the machine's disk, whose fill is not
// theirs to judge: with upstream's thresholds a build machine's full disk
// (its free space moves with what else runs on it) puts the node under
// DiskPressure, the node lifecycle controller taints it NoSchedule, and
// no pod is scheduled there, so every test waits on a node that is Ready
// but refuses work. Eviction itself is tested with thresholds of the
// test's own (test/e2e TestClusterEviction, TestClusterDiskPressure).
const SharedHostEviction = `evictionHard:
  memory.available: 100Mi
  nodefs.available: 1%
  nodefs.inodesFree: 1%
  imagefs.available: 1%
  imagefs.inodesFree: 1%
`
