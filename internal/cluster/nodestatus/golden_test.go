package nodestatus

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// TestGoldenNodes shows whole Node objects as the API server would store
// them: registration, then updates. Run with -update to rewrite.
func TestGoldenNodes(t *testing.T) {
	tests := []struct {
		name  string
		build func() *corev1.Node
	}{
		{"initial-node", func() *corev1.Node {
			in := baseInputs()
			in.Machine.HugePages = map[string]int64{"2Mi": 512 << 20}
			in.Reserved.KubeReserved = map[string]string{"cpu": "100m", "memory": "256Mi"}
			in.Images = []Image{
				{RepoTags: []string{"registry.k8s.io/pause:3.10"}, RepoDigests: []string{"registry.k8s.io/pause@sha256:ee6521f290b2168b6e0935a181d4cff9be1ac3f505666ef0e3c98fae8199917a"}, SizeBytes: 320368},
				{RepoTags: []string{"docker.io/library/busybox:1.36"}, SizeBytes: 2160406},
			}
			return InitialNode(in, map[string]string{"node-role.kubernetes.io/edge": ""},
				[]corev1.Taint{{Key: "berth.dev/new", Effect: corev1.TaintEffectNoSchedule}})
		}},
		{"network-not-ready-after-reboot", func() *corev1.Node {
			node := InitialNode(baseInputs(), nil, nil)
			in := baseInputs()
			in.Now = t0.Add(time.Minute)
			in.Machine.BootID = "boot-2"
			in.NetworkReady = false
			in.NetworkMessage = NetworkNotReadyMessage("NetworkPluginNotReady", "Network plugin returns error: cni plugin not initialized")
			Apply(node, in)
			return node
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := yaml.Marshal(tt.build())
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", tt.name+".golden")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("node mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
