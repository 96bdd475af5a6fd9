// Package subpath mounts a volumeMount's subPath into a container without
// ever handing the runtime a path a pod can change (CVE-2017-1002101,
// CVE-2021-25741).
//
// A subPath names a place inside a volume that containers of the pod can
// write, so a sibling container can swap a directory of it for a symlink
// at any moment. Resolving the path and later letting the runtime
// bind-mount the string is therefore a race a pod wins. Instead, as
// upstream's pkg/volume/util/subpath does, Binder.Bind:
//
//  1. resolves the subPath once, as upstream does, only to refuse one
//     that a symlink leads outside its volume;
//  2. opens it relative to the pinned volume root with
//     github.com/cyphar/filepath-securejoin (openat2 RESOLVE_IN_ROOT, or
//     its O_NOFOLLOW walk on old kernels), creating missing directories
//     with MkdirAllHandle and the volume root's whole mode (fsGroup's
//     setgid and tmpfs's sticky bit included, as upstream's SafeMakeDir),
//     and checks the opened descriptor is the resolved path:
//     a component swapped meanwhile fails the start rather than being
//     followed;
//  3. bind-mounts that descriptor (/proc/<pid>/fd/<n>, with mount(8)
//     --no-canonicalize through k8s.io/mount-utils) onto
//     <pod dir>/volume-subpaths/<volume>/<container>/<index>, checks the
//     bind shows the opened inode, and returns that path: the runtime
//     mounts the bind, which no pod can redirect.
//
// A bind that already shows the freshly opened inode is kept (a restarted
// berth or a re-synced container); a stale one is unmounted and replaced.
// Binder.CleanPod unmounts and removes every bind of a pod before its
// directory is removed; it never follows a symlink and never removes
// recursively, so a bind it could not unmount keeps the pod directory.
//
// Files:
//
//	validate.go     Validate (the pure subPath string check, fuzzed),
//	                Request and the bind target's path
//	open_linux.go   resolve, open and create the subPath inside its volume
//	bind_linux.go   Binder, Bind: the bind mount and its checks
//	clean_linux.go  CleanPod
//	subpath_other.go stubs outside Linux
//
// Concurrency: a Binder is safe for concurrent use. Binds and cleans of
// different pods run in parallel; the caller (the pod worker) never binds
// for a pod while it cleans that pod.
package subpath
