// Package pullprogress tells how far an image pull has got, which the CRI
// does not say: bytes done of the image's total and the rate, read from the
// runtime's content store while the pull runs (on containerd, its ingest
// statuses and committed blobs; internal/platform/contentstore).
//
// A pull is matched to its image by containerd's distribution source label
// (containerd.io/distribution.source.<registry>=<repository>), which a pull
// puts on every blob it fetches, the manifest first: the image manifest of
// the pull's repository that was committed since the pull began, or that
// lists a blob being downloaded now (a pull resumed after a failed one).
// Its config and layers are the total; each counts as done once committed,
// and as far as its ingest has got while it downloads. Layers already on
// the node count as done: the pull needs nothing more of them. Two pulls of
// the same repository at once may be told apart wrongly; pulls of
// different repositories never are.
//
// Watcher polls while a pull runs and reports each new reading to its
// caller (kuberuntime), which puts it in the pod's timeline, the Pulling
// event and the metrics. A runtime without a content store API is said so
// once, in the log, and never asked again.
package pullprogress
