package nodestatus

import (
	"net"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/platform/machine"
)

var t0 = time.Date(2026, 11, 22, 19, 0, 0, 0, time.UTC)

// baseInputs is a healthy node's snapshot; each test row mutates a copy.
func baseInputs() Inputs {
	return Inputs{
		NodeName: "node-a",
		Hostname: "node-a",
		Machine: machine.Info{
			NumCPU:          4,
			MemoryBytes:     8 << 30,
			MachineID:       "mid",
			SystemUUID:      "uuid",
			BootID:          "boot-1",
			KernelVersion:   "6.1.0-18-amd64",
			OSImage:         "Debian GNU/Linux 12 (bookworm)",
			OperatingSystem: "linux",
			Architecture:    "amd64",
			RootFSBytes:     100e9,
		},
		NodeIPs:        []net.IP{net.ParseIP("10.0.0.5")},
		RuntimeVersion: "containerd://1.6.20",
		RuntimeReady:   true,
		NetworkReady:   true,
		KubeletVersion: "v1.37.2",
		KubeletPort:    10250,
		MaxPods:        110,

		DeclaredFeatures: []string{"ExtendWebSocketsToKubelet", "RestartAllContainersOnContainerExits"},

		ControllerAttachDetach:        true,
		LocalStorageCapacityIsolation: true,
		Reserved: Reserved{EvictionHard: map[string]string{
			"memory.available": "100Mi", "nodefs.available": "10%",
			"nodefs.inodesFree": "5%", "imagefs.available": "15%",
		}},
		MaxImages: 50,
		Now:       t0,
	}
}

// quantities renders a resource list as strings, for readable diffs.
func quantities(l corev1.ResourceList) map[string]string {
	if l == nil {
		return nil
	}
	out := map[string]string{}
	for k, v := range l {
		out[string(k)] = v.String()
	}
	return out
}
