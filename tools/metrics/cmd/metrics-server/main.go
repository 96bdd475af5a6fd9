// Command metrics-server is the upstream metrics-server
// (sigs.k8s.io/metrics-server) at the version pinned in this module's
// go.mod, built for berth's `kubectl top` tests: it scrapes each node's
// /metrics/resource and serves metrics.k8s.io through the API server's
// aggregation layer.
//
// It is upstream's cmd/metrics-server main.
package main

import (
	"os"
	"runtime"

	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/component-base/logs"
	"sigs.k8s.io/metrics-server/cmd/metrics-server/app"
)

func main() {
	logs.InitLogs()
	defer logs.FlushLogs()

	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(runtime.NumCPU())
	}
	cmd := app.NewMetricsServerCommand(genericapiserver.SetupSignalHandler())
	if err := cmd.Execute(); err != nil {
		// cobra has printed the error.
		os.Exit(1)
	}
}
