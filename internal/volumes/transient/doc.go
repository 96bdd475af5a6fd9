// Package transient owns one decision: whether a failure is expected to
// clear on its own within seconds, and how such a failure is retried.
//
//	classify.go  Is: the table of transient failures (pure)
//	retry.go     Do: retry one operation with a short exponential back-off
//	             on an injected clock, bounded in attempts
//
// A transient failure is retried where it happened, per operation (the
// token request of one projected volume, the read of one configMap), as
// upstream's volume operations are, so that it costs the pod a few hundred
// milliseconds instead of failing its whole sync and waiting out the pod
// worker's back-off. Everything else fails at once and is retried by the
// pod worker after its back-off, as before.
//
// The classes, in one table (classify.go):
//
//	forbidden (403)                  transient only while the pod is
//	                                 Recent: right after binding, the
//	                                 API server's node authorizer may not
//	                                 know the pod → node edge yet
//	not found (404) of the pod a     transient only while the pod is
//	token is bound to                Recent: the API server may not see
//	                                 a pod created a moment ago yet
//	429, 500, 503, 504, server and   transient: the API server is
//	client timeouts                  overloaded or starting
//	objectcache.ErrNotSynced         transient: the object's watch has not
//	                                 listed yet
//	podcert.ErrNotIssued             transient: a podCertificate's request
//	                                 the signer has not answered yet
//	cri.ErrDeadlineExceeded,         transient: the runtime was slow or
//	cri.ErrUnavailable               restarting
//	Waiting(err)                     transient: the caller says it waits
//	                                 on another part of the cluster (a
//	                                 claim not bound yet); retried by the
//	                                 pod worker at its short back-off, not
//	                                 where it happened
//
// Any other not found is not transient: a missing non-optional configMap or secret is
// upstream's FailedMount, retried by the pod worker until it appears.
// Cancellation is never transient: the caller gave up.
package transient
