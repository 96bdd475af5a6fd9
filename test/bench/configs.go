package bench

import (
	"fmt"
	"strconv"
)

// The configurations both kubelets are measured in (-configs).
const (
	// ConfigShared is sharedConfig: every field the two kubelets share set
	// the same way, the node guards explicit.
	ConfigShared = "shared"
	// ConfigDefaults gives each kubelet only what this machine needs and
	// leaves everything else at the kubelet's own defaults, so that
	// nothing is tuned to the shared file alone.
	ConfigDefaults = "defaults"
)

// Configurations lists every configuration, in the order they run.
func Configurations() []string { return []string{ConfigShared, ConfigDefaults} }

// upstreamMaxPods is the kubelet's default maxPods.
const upstreamMaxPods = 110

// NodeConfig is what a configuration depends on in this run.
type NodeConfig struct {
	CRIEndpoint string
	// ClientCAFile is the cluster CA: the kubelet API authenticates
	// client certificates it signed (the defaults configuration).
	ClientCAFile string
	MaxPods      int
}

// KubeletConfig is the KubeletConfiguration (YAML lines) kubelet col runs
// with in configuration name. It is pure.
func KubeletConfig(name, col string, nc NodeConfig) ([]string, error) {
	switch name {
	case ConfigShared:
		lines := sharedConfig(nc.CRIEndpoint, nc.MaxPods)
		if col == ColUpstream {
			lines = append(lines, UpstreamConfig()...)
		}
		return lines, nil
	case ConfigDefaults:
		return defaultsConfig(nc), nil
	}
	return nil, fmt.Errorf("configuration %q: want %q or %q", name, ConfigShared, ConfigDefaults)
}

// defaultsConfig is what this machine needs and nothing more: the runtime
// endpoint, cgroupfs, cgroup v1 and swap allowed, and the kubelet API as a
// real node serves it (TLS with the kubelet's self-signed certificate, no
// anonymous requests, client certificates of the cluster CA and bearer
// tokens checked with the API server, every request authorized by a
// SubjectAccessReview). maxPods is written only when it differs from the
// default (the density scenario). The authentication and authorization
// lines restate the v1beta1 defaults but for the client CA, which a real
// node is given.
//
// Two more lines protect the machine, which other tests share, not the
// measurement: image GC that never removes an image (at the defaults,
// 85/80 %, a disk filled by others would make both kubelets delete the
// locally built test images, which no registry can give back; the image
// manager still runs), and no iptables chains (upstream's KUBE-FIREWALL
// and its DROP rule would outlive the run on the host).
func defaultsConfig(nc NodeConfig) []string {
	lines := []string{
		"apiVersion: kubelet.config.k8s.io/v1beta1",
		"kind: KubeletConfiguration",
		"containerRuntimeEndpoint: " + nc.CRIEndpoint,
		"cgroupDriver: cgroupfs",
		"failCgroupV1: false",
		"failSwapOn: false",
		"imageGCHighThresholdPercent: 100",
		"imageGCLowThresholdPercent: 99",
		"makeIPTablesUtilChains: false",
		"authentication:",
		"  anonymous: {enabled: false}",
		"  webhook: {enabled: true}",
		"  x509: {clientCAFile: " + nc.ClientCAFile + "}",
		"authorization: {mode: Webhook}",
	}
	if nc.MaxPods != 0 && nc.MaxPods != upstreamMaxPods {
		lines = append(lines, "maxPods: "+strconv.Itoa(nc.MaxPods))
	}
	return lines
}
