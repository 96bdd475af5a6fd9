// Package contentstore reads containerd's content store through
// containerd's own API (containerd.services.content.v1), on the socket the
// CRI is served on: the ingests of the downloads in progress, and the blobs
// a pull has committed with their labels. berth reads it to tell how far an
// image pull has got (internal/images/pullprogress), which the CRI does not
// say. It only reads; it never writes or deletes content.
//
// Everything is read in the namespace of containerd's CRI plugin, k8s.io.
// A runtime that does not serve the API (CRI-O) answers Unimplemented, which
// the caller sees as cri.ErrUnimplemented through the CRI connection's
// interceptors.
package contentstore
