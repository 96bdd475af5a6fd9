// Package podsource owns where berth's pods come from and how the sources
// are merged into one stream of incremental updates.
//
//   - decode.go, defaults.go, staticpod.go, validate.go turn a manifest (one
//     Pod, or for the URL source a PodList, in YAML or JSON) into static pods:
//     API-server defaults, the static pod name/UID/annotations, validation
//     (validate_paths.go: the volume file paths, subPaths and hostPaths).
//   - file.go lists a manifest directory (or one file) on every fsnotify event
//     (watch.go) and every period; http.go polls a URL. Both send full
//     Snapshots of their pods when they change, and once at start.
//   - a pod UID must pass podutil.ValidateUID before it becomes a path
//     element: static manifests are checked in ValidatePod (the error names
//     the file or URL), and diff.go refuses a pod with an invalid UID from
//     any source, so nothing downstream sees one.
//   - merger.go is the one goroutine that keeps, per source, the pods it last
//     gave; diff.go is the pure function that turns a source's new pod set
//     into ADD/UPDATE/DELETE/REMOVE/RECONCILE Updates.
//   - annotations.go holds the config.* annotation keys and the helpers the
//     rest of berth uses to tell static and mirror pods apart.
//
// The behaviour follows the upstream kubelet's pkg/kubelet/config; the code is
// berth's own.
package podsource
