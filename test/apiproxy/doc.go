// Package apiproxy is an HTTPS proxy between a kubelet and the API server
// that forwards every request unchanged, with the kubelet's own
// credentials, until a test injects a fault: then it cuts the requests in
// flight (watches included) and answers every new one with the fault's
// status (429 with Retry-After, 500, ...) until the fault is cleared. It
// counts the requests it saw, so a test can tell how hard a kubelet pressed
// a throttled API server. test/soak's api-storm scenario uses it; it is
// the API side of test/criproxy.
package apiproxy
