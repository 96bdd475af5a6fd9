// Package pullrecords keeps the records of the images berth pulled and
// with which credentials, and decides whether a pod may use an image that
// is already on the node without pulling it again: upstream's
// KubeletEnsureSecretPulledImages (beta, on by default since v1.35) with
// imagePullCredentialsVerificationPolicy and
// preloadedImagesVerificationAllowlist.
//
// Without it, a pod in one namespace could run a private image another
// namespace's pull secret brought to the node, just by naming it with
// imagePullPolicy IfNotPresent. With it, an image pulled by berth with a
// pull secret is handed to a pod only if the pod presents that secret (the
// same secret object, or one whose credentials hash the same); otherwise
// berth pulls again with the pod's own credentials, which the registry
// then accepts or refuses.
//
// The records are upstream's files, so a node moves between berth and the
// upstream kubelet keeping them: <root-dir>/image_manager/pulling holds an
// ImagePullIntent per image being pulled and pulled holds an
// ImagePulledRecord per image reference, each named "sha256-" and the hex
// SHA-256 of the image or reference, in kubelet.config.k8s.io/v1beta1 JSON
// (v1alpha1 files are read and rewritten as v1beta1, as upstream
// migrates them).
//
// Intents and credential mappings are keyed by the image's normalised
// name (name.go: containerd's normalisation, done once where an image
// enters the Manager), records by image ID, so that no other spelling of
// an image escapes its record; upstream keys them by the pod's spelling.
// Intents are written durably (file and directory synced) before a pull.
//
// Policy is pure: which images need their credentials verified. decide is
// pure: given a record and the pod's credentials, must the image be
// pulled. Store is the only file that touches the disk; Manager keeps the
// records in memory (they are bounded by the images on the node, and
// pruned with them by the image GC), writes through to the Store, and is
// safe for concurrent use.
package pullrecords
