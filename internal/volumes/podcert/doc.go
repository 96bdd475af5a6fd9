// Package podcert is the node's side of podCertificate projected volume
// sources (PodCertificateRequest, certificates.k8s.io/v1, GA and on by
// default in Kubernetes 1.37), as upstream's kubelet podcertificate
// manager: for each projection of a pod, a private key of the type it asks
// for generated on the node, a PodCertificateRequest made for it (the
// signer, the pod, its service account and the node with their UIDs, an
// empty PKCS#10 request signed with the key as the proof of possession,
// maxExpirationSeconds, the user annotations), the certificate chain the
// signer issues, and a new key and request once beginRefreshAt (plus up
// to five minutes of jitter) passed. A denied or failed request is final
// for the projection, as upstream's; the pod gets a warning event.
//
// The volume manager (internal/volumes/volume) writes the files: it asks
// Bundle for a projection's key and chain when it sets up the volume
// (the volume is not ready until the first certificate is issued) and in
// every refresh round, which is the clock that makes refreshes happen.
//
//	keys.go     the key types, the key and its stub CSR, the chain as the pod sees it
//	state.go    a projection's lifecycle: phase, record, the pure observe and
//	            made transitions, upstream's messages
//	check.go    Check: the projection refused as the API would, before any request
//	manager.go  Manager: Bundle (observe, request, answer), Forget
//	            (internal/pod/podgone: the keys of a pod that is gone are dropped)
package podcert
