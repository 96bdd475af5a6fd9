// Package kubeclient builds berth's clients of the Kubernetes API server from
// a kubeconfig and the KubeletConfiguration's client settings, the way the
// upstream kubelet's cmd/kubelet/app builds its three clients:
//
//   - Main: pods, nodes, secrets and the rest, limited to kubeAPIQPS and
//     kubeAPIBurst.
//   - Heartbeat: node status and the node lease. No client-side throttling
//     (QPS -1), so a busy Main client cannot delay a heartbeat, and a
//     request timeout of min(nodeStatusUpdateFrequency, node lease
//     duration), so a hung connection cannot stall one either.
//   - Events: event recording, limited to eventRecordQPS and eventBurst;
//     eventRecordQPS 0 means no limit.
//
// All three speak kubeletConfiguration.contentType (protobuf by default,
// with JSON accepted too) and send one user agent (see UserAgent). As
// upstream, they are separate clientsets with their own rate limiters, built
// from copies of one rest.Config, so client-go's transport cache lets them
// share the TLS connection to the API server.
//
// OptionsFromConfig maps berth's Config onto Options. restConfigs is the
// pure part (loaded kubeconfig in, rest.Configs out) and is what the tests
// look at; New reads the file and makes the clientsets, sending nothing.
// Certificate bootstrap and client certificate rotation are not here.
package kubeclient
