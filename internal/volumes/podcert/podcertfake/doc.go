// Package podcertfake is a signer of PodCertificateRequests for tests: it
// answers every request made through a client-go fake clientset as it is
// created (issued from its own CA, denied, failed, or left pending for
// Decide) and keeps what it was asked. Certificate issues a leaf as a
// signer's issued status says it.
//
//	signer.go  Signer: New, Attach, Decide, Requests, Pool; Certificate
package podcertfake
