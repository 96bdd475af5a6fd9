// Command kube-apiserver is the upstream kube-apiserver of k8s.io/kubernetes at the version
// pinned in this module's go.mod, built for berth's development cluster.
package main

import (
	"os"
	_ "time/tzdata" // time zones for CronJob, as upstream

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"          // JSON log format
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics
	_ "k8s.io/component-base/metrics/prometheus/version"  // version metric
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	os.Exit(cli.Run(app.NewAPIServerCommand()))
}
