// Command kube-proxy is the upstream kube-proxy of k8s.io/kubernetes at the version
// pinned in this module's go.mod, built for berth's development cluster
// (test/cluster's kubeproxy.go runs it in iptables mode).
package main

import (
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"          // JSON log format
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics
	_ "k8s.io/component-base/metrics/prometheus/version"  // version metric
	"k8s.io/kubernetes/cmd/kube-proxy/app"
)

func main() {
	os.Exit(cli.Run(app.NewProxyCommand()))
}
