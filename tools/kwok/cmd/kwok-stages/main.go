// Command kwok-stages prints the Stages a kwok cluster made by kwokctl
// runs with by default, as a kwok configuration file (kwok --config): the
// node stages node-initialize and node-heartbeat-with-lease, the pod stages
// pod-ready, pod-complete and pod-delete, from the YAML kwok embeds at the
// version this module pins. The kwok binary alone starts with no stages at
// all ("no stages found"): kwokctl writes them into the kwok.yaml it hands
// kwok, which is what this command does, composed as kwokctl's
// getDefaultNodeStages (with a node lease) and getDefaultPodStages do
// (pkg/kwokctl/runtime/cluster.go). kwokctl's default heartbeat period
// (10 s times its heartbeat factor of 5) is under the heartbeat stage's own
// delay, so it leaves the stages as they are embedded, and so does this.
//
// make simbench (test/simbench) runs kwok with this file.
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	nodefast "sigs.k8s.io/kwok/kustomize/stage/node/fast"
	nodeheartbeatwithlease "sigs.k8s.io/kwok/kustomize/stage/node/heartbeat-with-lease"
	podfast "sigs.k8s.io/kwok/kustomize/stage/pod/fast"
	"sigs.k8s.io/kwok/pkg/apis/internalversion"
	"sigs.k8s.io/kwok/pkg/config"
)

func main() {
	if err := write(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "kwok-stages:", err)
		os.Exit(1)
	}
}

// defaultStages is the YAML of each default stage, nodes first, in
// kwokctl's order.
func defaultStages() []string {
	return []string{
		nodefast.DefaultNodeInit,
		nodeheartbeatwithlease.DefaultNodeHeartbeatWithLease,
		podfast.DefaultPodReady,
		podfast.DefaultPodComplete,
		podfast.DefaultPodDelete,
	}
}

// write prints the default stages as one kwok configuration.
func write(ctx context.Context, w io.Writer) error {
	var objs []config.InternalObject
	for _, raw := range defaultStages() {
		stage, err := config.UnmarshalWithType[*internalversion.Stage](raw)
		if err != nil {
			return fmt.Errorf("parse default stage: %w", err)
		}
		objs = append(objs, stage)
	}
	return config.SaveTo(ctx, w, objs)
}
