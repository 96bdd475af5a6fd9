package nodestatus

import (
	"net"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestAddresses(t *testing.T) {
	old := []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.9.9.9"}}
	tests := []struct {
		name     string
		ips      []string
		hostname string
		want     []corev1.NodeAddress
	}{
		{"one IP", []string{"10.0.0.5"}, "node-a", []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: "10.0.0.5"}, {Type: corev1.NodeHostName, Address: "node-a"}}},
		{"dual stack pair", []string{"10.0.0.5", "fd00::5"}, "node-a", []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: "10.0.0.5"}, {Type: corev1.NodeInternalIP, Address: "fd00::5"},
			{Type: corev1.NodeHostName, Address: "node-a"}}},
		{"unspecified is ignored", []string{"0.0.0.0", "fd00::5"}, "node-a", []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: "fd00::5"}, {Type: corev1.NodeHostName, Address: "node-a"}}},
		{"hostname that is an IP", nil, "10.1.2.3", []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: "10.1.2.3"}, {Type: corev1.NodeHostName, Address: "10.1.2.3"}}},
		{"no IP leaves addresses alone", nil, "node-a", old},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := baseInputs()
			in.Hostname = tt.hostname
			in.NodeIPs = nil
			for _, s := range tt.ips {
				in.NodeIPs = append(in.NodeIPs, net.ParseIP(s))
			}
			node := &corev1.Node{Status: corev1.NodeStatus{Addresses: old}}
			if ev := Addresses(node, in); ev != nil {
				t.Errorf("Addresses() events = %v", ev)
			}
			if diff := cmp.Diff(tt.want, node.Status.Addresses); diff != "" {
				t.Errorf("addresses mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMachineInfoNodeInfo(t *testing.T) {
	swap := int64(2 << 30)
	tests := []struct {
		name       string
		prevBootID string
		swapBytes  int64
		want       corev1.NodeSystemInfo
		events     []Event
	}{
		{"first report", "", 0, corev1.NodeSystemInfo{MachineID: "mid", SystemUUID: "uuid", BootID: "boot-1"}, nil},
		{"same boot", "boot-1", 0, corev1.NodeSystemInfo{MachineID: "mid", SystemUUID: "uuid", BootID: "boot-1"}, nil},
		{"rebooted", "boot-0", 0, corev1.NodeSystemInfo{MachineID: "mid", SystemUUID: "uuid", BootID: "boot-1"},
			[]Event{{Type: "Warning", Reason: "Rebooted", Message: "Node node-a has been rebooted, boot id: boot-1"}}},
		{"swap", "", swap, corev1.NodeSystemInfo{MachineID: "mid", SystemUUID: "uuid", BootID: "boot-1",
			Swap: &corev1.NodeSwapStatus{Capacity: &swap}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := baseInputs()
			in.Machine.SwapBytes = tt.swapBytes
			node := &corev1.Node{}
			node.Status.NodeInfo.BootID = tt.prevBootID
			node.Status.NodeInfo.Swap = &corev1.NodeSwapStatus{} // cleared unless swap exists
			events := MachineInfo(node, in)
			if diff := cmp.Diff(tt.want, node.Status.NodeInfo); diff != "" {
				t.Errorf("nodeInfo mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.events, events); diff != "" {
				t.Errorf("events mismatch (-want +got):\n%s", diff)
			}
			if node.Status.Capacity == nil || node.Status.Allocatable == nil {
				t.Errorf("capacity and allocatable not set")
			}
		})
	}
}

func TestVersionInfoAndEndpoints(t *testing.T) {
	node := &corev1.Node{}
	node.Status.NodeInfo.KubeProxyVersion = "v1.30.0" //nolint:staticcheck // the setter must clear it
	node.Status.NodeInfo.MachineID = "kept"
	in := baseInputs()
	VersionInfo(node, in)
	DaemonEndpoints(node, in)
	want := corev1.NodeStatus{
		NodeInfo: corev1.NodeSystemInfo{
			MachineID:               "kept",
			KernelVersion:           "6.1.0-18-amd64",
			OSImage:                 "Debian GNU/Linux 12 (bookworm)",
			ContainerRuntimeVersion: "containerd://1.6.20",
			KubeletVersion:          "v1.37.2",
			OperatingSystem:         "linux",
			Architecture:            "amd64",
		},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
	}
	if diff := cmp.Diff(want, node.Status); diff != "" {
		t.Errorf("status mismatch (-want +got):\n%s", diff)
	}
}

func TestImages(t *testing.T) {
	images := []Image{
		{RepoTags: []string{"small:1"}, SizeBytes: 10},
		{RepoTags: []string{"big:1", "big:latest"}, RepoDigests: []string{"big@sha256:b"}, SizeBytes: 300},
		{RepoTags: []string{"mid-b:1"}, SizeBytes: 200},
		{RepoTags: []string{"mid-a:1"}, SizeBytes: 200},
		{RepoTags: []string{"t1", "t2", "t3", "t4"}, RepoDigests: []string{"d1", "d2"}, SizeBytes: 5},
		{SizeBytes: 1},
	}
	all := []corev1.ContainerImage{
		{Names: []string{"big@sha256:b", "big:1", "big:latest"}, SizeBytes: 300},
		{Names: []string{"mid-a:1"}, SizeBytes: 200},
		{Names: []string{"mid-b:1"}, SizeBytes: 200},
		{Names: []string{"small:1"}, SizeBytes: 10},
		{Names: []string{"d1", "d2", "t1", "t2", "t3"}, SizeBytes: 5},
		{Names: []string{}, SizeBytes: 1},
	}
	tests := []struct {
		name   string
		images []Image
		max    int32
		want   []corev1.ContainerImage
	}{
		{"all with -1", images, -1, all},
		{"all under the limit", images, 50, all},
		{"largest first, limited", images, 2, all[:2]},
		{"zero reports none", images, 0, nil},
		{"no images", nil, 50, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := baseInputs()
			in.Images, in.MaxImages = tt.images, tt.max
			node := &corev1.Node{Status: corev1.NodeStatus{Images: []corev1.ContainerImage{{Names: []string{"old"}}}}}
			Images(node, in)
			if diff := cmp.Diff(tt.want, node.Status.Images); diff != "" {
				t.Errorf("images mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRuntimeHandlers(t *testing.T) {
	yes := true
	in := baseInputs()
	in.RuntimeHandlers = []corev1.NodeRuntimeHandler{{Name: "", Features: &corev1.NodeRuntimeHandlerFeatures{RecursiveReadOnlyMounts: &yes}}}
	node := &corev1.Node{Status: corev1.NodeStatus{Features: &corev1.NodeFeatures{SupplementalGroupsPolicy: &yes}}}
	RuntimeHandlers(node, in)
	if diff := cmp.Diff(in.RuntimeHandlers, node.Status.RuntimeHandlers); diff != "" {
		t.Errorf("handlers mismatch (-want +got):\n%s", diff)
	}
	if node.Status.Features == nil {
		t.Errorf("features cleared by a snapshot without features")
	}
	in.Features = &corev1.NodeFeatures{}
	RuntimeHandlers(node, in)
	if diff := cmp.Diff(in.Features, node.Status.Features); diff != "" {
		t.Errorf("features mismatch (-want +got):\n%s", diff)
	}
}

func TestDeclaredFeatures(t *testing.T) {
	tests := []struct {
		name     string
		had      []string
		declared []string
		want     []string
	}{
		{name: "set on a new node", declared: []string{"ExtendWebSocketsToKubelet", "RestartAllContainersOnContainerExits"},
			want: []string{"ExtendWebSocketsToKubelet", "RestartAllContainersOnContainerExits"}},
		{name: "replaces what the node had", had: []string{"InPlacePodLevelResourcesVerticalScaling", "RestartAllContainersOnContainerExits"},
			declared: []string{"RestartAllContainersOnContainerExits"}, want: []string{"RestartAllContainersOnContainerExits"}},
		{name: "none declared clears the field", had: []string{"ExtendWebSocketsToKubelet"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := baseInputs()
			in.DeclaredFeatures = tt.declared
			node := &corev1.Node{Status: corev1.NodeStatus{DeclaredFeatures: tt.had}}
			DeclaredFeatures(node, in)
			if diff := cmp.Diff(tt.want, node.Status.DeclaredFeatures); diff != "" {
				t.Errorf("declared features (-want +got):\n%s", diff)
			}
			if len(tt.declared) > 0 {
				node.Status.DeclaredFeatures[0] = "changed"
				if in.DeclaredFeatures[0] == "changed" {
					t.Error("the node shares the snapshot's slice")
				}
			}
			if !StatusChanged(&corev1.NodeStatus{DeclaredFeatures: tt.had}, &node.Status) && !cmp.Equal(tt.had, tt.want) {
				t.Error("StatusChanged misses a change of declared features")
			}
		})
	}
}

// TestAddressesExternalCloudProvider follows upstream's NodeAddress setter
// with --cloud-provider=external.
func TestAddressesExternalCloudProvider(t *testing.T) {
	ccm := []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.9.9.9"}, {Type: corev1.NodeExternalIP, Address: "203.0.113.9"}}
	tests := []struct {
		name           string
		ips            []string
		existing       []corev1.NodeAddress
		annotations    map[string]string
		want           []corev1.NodeAddress
		wantAnnotation string
	}{
		{name: "no --node-ip: hostname only", want: []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: "node-a"}}},
		{name: "no --node-ip: the CCM's addresses stay", existing: ccm, want: ccm},
		{name: "--node-ip until the CCM sets addresses", ips: []string{"10.0.0.5"},
			want:           []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.5"}, {Type: corev1.NodeHostName, Address: "node-a"}},
			wantAnnotation: "10.0.0.5"},
		{name: "--node-ip with the CCM's addresses", ips: []string{"10.0.0.5"}, existing: ccm, want: ccm, wantAnnotation: "10.0.0.5"},
		{name: "dual-stack --node-ip", ips: []string{"10.0.0.5", "fd00::5"}, existing: ccm, want: ccm, wantAnnotation: "10.0.0.5,fd00::5"},
		{name: "stale annotation removed", existing: ccm, want: ccm, annotations: map[string]string{AnnotationProvidedNodeIP: "10.0.0.1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := baseInputs()
			in.Hostname = "node-a"
			in.ExternalCloudProvider = true
			in.NodeIPs = nil
			for _, s := range tt.ips {
				in.NodeIPs = append(in.NodeIPs, net.ParseIP(s))
			}
			node := &corev1.Node{Status: corev1.NodeStatus{Addresses: tt.existing}}
			node.Annotations = tt.annotations
			Addresses(node, in)
			if diff := cmp.Diff(tt.want, node.Status.Addresses); diff != "" {
				t.Errorf("addresses mismatch (-want +got):\n%s", diff)
			}
			if got := node.Annotations[AnnotationProvidedNodeIP]; got != tt.wantAnnotation {
				t.Errorf("provided-node-ip annotation %q, want %q", got, tt.wantAnnotation)
			}
		})
	}
	// Without an external cloud provider the annotation goes.
	in := baseInputs()
	node := &corev1.Node{}
	node.Annotations = map[string]string{AnnotationProvidedNodeIP: "10.0.0.1"}
	Addresses(node, in)
	if _, ok := node.Annotations[AnnotationProvidedNodeIP]; ok {
		t.Error("provided-node-ip annotation kept without an external cloud provider")
	}
}

// TestVolumesInUse: the attachable volumes in use are reported; an empty
// list clears them; a list not known this round keeps the Node's.
func TestVolumesInUse(t *testing.T) {
	a, b := corev1.UniqueVolumeName("kubernetes.io/csi/d^a"), corev1.UniqueVolumeName("kubernetes.io/csi/d^b")
	for _, tc := range []struct {
		name string
		have []corev1.UniqueVolumeName
		in   []corev1.UniqueVolumeName
		want []corev1.UniqueVolumeName
	}{
		{"reported", nil, []corev1.UniqueVolumeName{a, b}, []corev1.UniqueVolumeName{a, b}},
		{"replaced", []corev1.UniqueVolumeName{a, b}, []corev1.UniqueVolumeName{b}, []corev1.UniqueVolumeName{b}},
		{"none left", []corev1.UniqueVolumeName{a}, []corev1.UniqueVolumeName{}, nil},
		{"not known: kept", []corev1.UniqueVolumeName{a}, nil, []corev1.UniqueVolumeName{a}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			node := &corev1.Node{Status: corev1.NodeStatus{VolumesInUse: tc.have}}
			in := baseInputs()
			in.VolumesInUse = tc.in
			VolumesInUse(node, in)
			if diff := cmp.Diff(tc.want, node.Status.VolumesInUse); diff != "" {
				t.Errorf("volumesInUse (-want +got):\n%s", diff)
			}
		})
	}
}
