// Package cluster is the wing of berth's side of the API server:
//
//	nodestatus   the Node object, its status setters and the Lease
//	statussync   pod statuses written to the API server
//	mirrorpod    static pods' mirror pods
//	certificate  TLS bootstrap and certificate rotation
//	events       the event recorder
//	kubeclient   the API clients from a kubeconfig
//	podcidr      the node's pod CIDR handed to the runtime
//
// It may import podkit, platform, config and pod (archtest.Wings holds it).
package cluster
