// Package atomicwriter writes a set of files into a volume directory so that
// a reader sees either the whole old set or the whole new set, never a mix,
// the way upstream's pkg/volume/util/atomic_writer.go does for configMap,
// secret, downwardAPI and projected volumes.
//
// Layout of a volume directory after a write:
//
//	<dir>/..2026_11_22_20_00_00.123456789   the files of this version
//	<dir>/..data -> ..2026_11_22_20_00_00.123456789
//	<dir>/<top>  -> ..data/<top>            one per top-level path of the payload
//
// A new version is written into a fresh timestamped directory; then a
// symlink ..data_tmp pointing at it is renamed over ..data (rename(2) is
// atomic), then the user-visible symlinks of new top-level paths are created,
// those of vanished paths removed, and the old version's directory removed.
//
//	names.go   the writer's own names and CleanPath, the one form of an item path
//	plan.go    Payload, File, Plan and the pure Compute (what a write changes)
//	writer.go  Write: the plan applied to the real filesystem
//	read.go    the current version (..data checked, never followed blindly)
//	visible.go the top-level symlinks, and removal of what the writer made
//
// Pods write to volume directories (berth mounts these volumes read-only,
// as upstream since CVE-2017-1002102, but the writer does not rely on it):
// the writer opens the directory once as an os.Root and works relative to
// it, so no symlink leads it outside, and it reads or removes only entries
// it recognises as its own (see Write).
//
// Concurrency: Write must not run concurrently for the same directory; the
// caller (the volume manager) serialises writes per pod.
package atomicwriter
