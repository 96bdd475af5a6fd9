package podutil

import corev1 "k8s.io/api/core/v1"

// Annotation keys the pod sources and the merger maintain, as the upstream
// kubelet names them.
const (
	// ConfigSourceAnnotation names the source a pod came from: FileSource,
	// HTTPSource or APISource.
	ConfigSourceAnnotation = "kubernetes.io/config.source"
	// ConfigHashAnnotation holds the static pod's UID, a hash of its manifest.
	ConfigHashAnnotation = "kubernetes.io/config.hash"
	// ConfigSeenAnnotation holds, in RFC 3339 with nanoseconds, when berth
	// first saw the pod.
	ConfigSeenAnnotation = "kubernetes.io/config.seen"
	// ConfigMirrorAnnotation marks a mirror pod: the API object berth creates
	// for a static pod. Its value is the static pod's config hash.
	ConfigMirrorAnnotation = "kubernetes.io/config.mirror"
)

// Source names, the values of ConfigSourceAnnotation, as upstream's.
const (
	FileSource = "file"
	HTTPSource = "http"
	APISource  = "api"
)

// IsStatic reports whether pod came from a file or URL source: it carries a
// config.source annotation and that source is not the API server.
func IsStatic(pod *corev1.Pod) bool {
	source, ok := pod.Annotations[ConfigSourceAnnotation]
	return ok && source != APISource
}

// IsMirror reports whether pod is the API server's mirror of a static pod.
func IsMirror(pod *corev1.Pod) bool {
	_, ok := pod.Annotations[ConfigMirrorAnnotation]
	return ok
}
