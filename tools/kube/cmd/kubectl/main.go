// Command kubectl is the upstream kubectl (k8s.io/kubectl) at the version
// pinned in this module's go.mod, built for berth's development cluster.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
)

func main() {
	// As upstream: set the verbosity before the command is built, so that
	// klog works while kubectl reads its flags and .kuberc.
	logs.GlogSetter(cmd.GetLogVerbosity(os.Args)) //nolint:errcheck
	if err := cli.RunNoErrOutput(cmd.NewDefaultKubectlCommand()); err != nil {
		util.CheckErr(err)
	}
}
