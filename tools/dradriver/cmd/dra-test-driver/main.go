// Command dra-test-driver is upstream's DRA test driver
// (k8s.io/kubernetes/test/e2e/dra/test-driver), built unchanged for
// berth's end-to-end tests: its kubelet-plugin mode registers with the
// kubelet through <root-dir>/plugins_registry, publishes the node's
// ResourceSlices and answers NodePrepareResources with CDI devices whose
// specs it writes to --cdi-dir (each sets the claim's opaque parameters
// as environment variables).
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/test/e2e/dra/test-driver/app"
)

func main() {
	os.Exit(cli.Run(app.NewCommand()))
}
