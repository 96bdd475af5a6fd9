// Command checkpoint-sample prints a device manager checkpoint
// (kubelet_internal_checkpoint) written by upstream's checkpoint package
// of k8s.io/kubernetes at the version this module pins: berth's
// internal/node/devicemanager/checkpoint/testdata/upstream.json is its
// output, which berth's decoder and encoder are tested against.
package main

import (
	"fmt"
	"os"

	"google.golang.org/protobuf/proto"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
	"k8s.io/kubernetes/pkg/kubelet/cm/devicemanager/checkpoint"
)

func main() {
	resp, err := proto.Marshal(&pluginapi.ContainerAllocateResponse{
		Envs:   map[string]string{"DEVICES": "dev-1,dev-2"},
		Mounts: []*pluginapi.Mount{{ContainerPath: "/tmp/dev-1", HostPath: "/tmp/dev-1"}},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cp := checkpoint.New([]checkpoint.PodDevicesEntry{{
		PodUID: "7f9c5a1e-0000-4000-8000-000000000001", ContainerName: "app", ResourceName: "example.com/resource",
		DeviceIDs: checkpoint.DevicesPerNUMA{-1: {"dev-1"}, 0: {"dev-2"}}, AllocResp: resp,
	}}, map[string][]string{"example.com/resource": {"dev-1", "dev-2", "dev-3"}, "example.com/other": {}})
	b, err := cp.MarshalCheckpoint()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Stdout.Write(b)
}
